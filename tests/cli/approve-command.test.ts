import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { approvalCommand, shellQuote, WARD_BIN, wardCommand } from '../../src/decision/approval-command.js';
import { APPROVAL_POLICY, REPO, bareDir, ward } from './run.js';
import { node, RawProxy, TINY, writePolicy } from '../mcp/proxy/helpers.js';

const INTENT = join(REPO, 'examples', 'quickstart', 'write-config.json');

/** Paste a printed command into a shell, verbatim, in `cwd`. */
function paste(command: string, cwd: string, env: Record<string, string> = {}) {
  return spawnSync('sh', ['-c', command], { cwd, encoding: 'utf8', env: { ...process.env, WARD_STATE_DIR: '', ...env } });
}

describe('wardCommand: the way to run this Ward from any shell', () => {
  it('is `ward` only when the ward on PATH is this installation', () => {
    const bin = bareDir('ward-path-');
    symlinkSync(WARD_BIN, join(bin, 'ward'));
    symlinkSync(process.execPath, join(bin, 'node'));
    expect(wardCommand({ PATH: bin })).toBe('ward');
    // Another `ward` on PATH (say, the registry's) is not this one.
    const other = bareDir('ward-path-');
    writeFileSync(join(other, 'ward'), '#!/bin/sh\n');
    symlinkSync(process.execPath, join(other, 'node'));
    expect(wardCommand({ PATH: other })).toBe(`node ${realpathSync(WARD_BIN)}`);
  });

  it('is not `ward` when only npm put it on PATH (npx, npm exec, npm run): the pasting shell lacks it', () => {
    const bin = bareDir('ward-path-');
    symlinkSync(WARD_BIN, join(bin, 'ward'));
    symlinkSync(process.execPath, join(bin, 'node'));
    expect(wardCommand({ PATH: bin, npm_command: 'exec' })).toBe(`node ${realpathSync(WARD_BIN)}`);
    expect(wardCommand({ PATH: bin, npm_lifecycle_event: 'ci' })).toBe(`node ${realpathSync(WARD_BIN)}`);
  });

  it('spells node as an absolute path when the node on PATH is another one (or none)', () => {
    expect(wardCommand({ PATH: bareDir('ward-path-') })).toBe(`${shellQuote(process.execPath)} ${realpathSync(WARD_BIN)}`);
  });

  it('quotes paths for the shell', () => {
    const cmd = approvalCommand({
      intentDigest: 'a'.repeat(64),
      policyDigest: 'b'.repeat(64),
      scope: ['tool:x'],
      signer: { stateDir: "/tmp/it's here/.ward" },
      out: '/tmp/o.json',
      approver: 'Ann Lee',
      ward: 'ward',
    });
    expect(cmd).toContain(`--state-dir '/tmp/it'\\''s here/.ward'`);
    expect(cmd).toContain(`--approver 'Ann Lee'`);
  });
});

describe('gate eval prints an approve command that works verbatim from anywhere', () => {
  it('pasted in another directory (another HOME, no .ward/ there), it mints a token the retry accepts', () => {
    const project = bareDir('ward-approve-proj-');
    mkdirSync(join(project, '.ward'));
    mkdirSync(join(project, 'sub'));
    writeFileSync(join(project, 'policy.yaml'), APPROVAL_POLICY);
    const env = { HOME: bareDir('ward-home-') };
    const first = ward(['gate', 'eval', '--policy', '../policy.yaml', '--intent', INTENT], { cwd: join(project, 'sub'), env });
    expect(first.code, first.stderr).toBe(4);
    const lines = first.stdout.split('\n');
    const command = lines[lines.findIndex((l) => l.startsWith('next: a person approves')) + 1]!.trim();
    expect(command).toMatch(/ approve --intent-digest [0-9a-f]{64} --policy-digest [0-9a-f]{64} --call-digest [0-9a-f]{64} --scope tool:fs\.write_file --ttl 1h --approver \S+ --reason-code manual_approval /);
    expect(command).toContain(`--state-dir ${join(project, '.ward')} `);
    const tokenPath = join(project, '.ward', 'approvals', `approval_${/--intent-digest ([0-9a-f]{16})/.exec(command)![1]}.json`);
    expect(command.endsWith(`--out ${tokenPath}`)).toBe(true);
    expect(first.stdout).toContain(`then run the same gate eval again with --approval-token ${tokenPath}`);

    // Somewhere else entirely: a directory with no .ward/, a different HOME, no WARD_STATE_DIR.
    const elsewhere = bareDir('ward-elsewhere-');
    const minted = paste(command, elsewhere, { HOME: bareDir('ward-home-') });
    expect(minted.status, minted.stderr).toBe(0);
    expect(existsSync(tokenPath)).toBe(true);
    expect(existsSync(join(elsewhere, '.ward'))).toBe(false);

    const retry = ward(['gate', 'eval', '--policy', '../policy.yaml', '--intent', INTENT, '--approval-token', tokenPath, '--json'], { cwd: join(project, 'sub'), env });
    expect(retry.code, retry.stdout).toBe(0);
    expect(JSON.parse(retry.stdout)).toMatchObject({ verdict: 'allow', reason_codes: expect.arrayContaining(['approval_granted']) });
    // One use: the same token again needs a new approval.
    const again = ward(['gate', 'eval', '--policy', '../policy.yaml', '--intent', INTENT, '--approval-token', tokenPath, '--json'], { cwd: join(project, 'sub'), env });
    expect(again.code).toBe(4);
    expect(JSON.parse(again.stdout).reason_codes).toContain('approval_token_consumed');
  });

  it('with --private-key, the command signs with that key file', () => {
    const project = bareDir('ward-approve-key-');
    mkdirSync(join(project, '.ward'));
    writeFileSync(join(project, 'policy.yaml'), APPROVAL_POLICY);
    const keyDir = bareDir('ward-key-');
    expect(ward(['keys', 'init', '--state-dir', keyDir], { cwd: project }).code).toBe(0);
    const key = join(keyDir, 'keys', 'ward_private.key');
    const first = ward(['gate', 'eval', '--policy', 'policy.yaml', '--intent', INTENT, '--private-key', key], { cwd: project });
    expect(first.code).toBe(4);
    const command = first.stdout.split('\n').find((l) => l.includes(' approve --intent-digest'))!.trim();
    expect(command).toContain(`--private-key ${key} `);
    expect(command).not.toContain('--state-dir');
    expect(paste(command, bareDir()).status).toBe(0);
    const tokenPath = /--out (\S+)$/.exec(command)![1]!;
    const retry = ward(['gate', 'eval', '--policy', 'policy.yaml', '--intent', INTENT, '--private-key', key, '--approval-token', tokenPath], { cwd: project });
    expect(retry.code, retry.stdout).toBe(0);
  });
});

describe('the MCP proxy prints the same command', () => {
  it('with --private-key, it signs with that key file, and the retried call is allowed', async () => {
    const project = bareDir('ward-approve-proxy-');
    mkdirSync(join(project, '.ward'));
    writePolicy(project);
    const keyDir = bareDir('ward-key-');
    expect(ward(['keys', 'init', '--state-dir', keyDir], { cwd: project }).code).toBe(0);
    const key = join(keyDir, 'keys', 'ward_private.key');
    const note = join(project, 'doomed.txt');
    writeFileSync(note, 'x');
    const raw = new RawProxy(['--policy', 'policy.yaml', '--private-key', key], node(TINY), project);
    try {
      await raw.initialize();
      raw.call(1, 'delete_note', { path: note });
      const w = ((await raw.response(1))['result'] as { _meta: { ward: Record<string, string> } })._meta.ward;
      const command = w['approve_command']!;
      expect(command).toContain(`--private-key ${key} `);
      expect(command).not.toContain('--state-dir');
      expect(paste(command, bareDir()).status).toBe(0);
      raw.call(2, 'delete_note', { path: note });
      expect(((await raw.response(2))['result'] as { isError?: boolean }).isError).toBeFalsy();
      expect(existsSync(note)).toBe(false);
    } finally {
      raw.end();
      await raw.exited;
    }
  });
});
