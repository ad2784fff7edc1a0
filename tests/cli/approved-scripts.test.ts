import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addSeconds, nowUTC } from '../../src/canon/gotime.js';
import { normalizeIntent } from '../../src/intent/index.js';
import { readPrivateKeyFile } from '../../src/keys/index.js';
import { parsePolicyYaml } from '../../src/policy/load.js';
import { signApprovedScriptEntry } from '../../src/tokens/approved-scripts.js';
import { fixture, tempDir, v7PrivateKeyFile, ward } from './run.js';

const POLICY = 'default_verdict: block\n';

function registry(dir: string, riskScope: string): string {
  const intent = normalizeIntent(JSON.parse(readFileSync(fixture('intents/v4-script.json'), 'utf8')));
  const entry = signApprovedScriptEntry({
    patternId: 'read-then-write',
    policyDigest: parsePolicyYaml(POLICY).digest,
    scriptHash: intent.script_hash,
    toolSequence: intent.script!.steps.map((s) => s.tool_name),
    scope: [riskScope],
    approver: 'lead@example.com',
    expiresAt: addSeconds(nowUTC(), 3600),
    now: nowUTC(),
    producerVersion: 'test',
    key: readPrivateKeyFile(v7PrivateKeyFile()),
  });
  const path = join(dir, 'registry.json');
  writeFileSync(path, JSON.stringify({ entries: [entry] }));
  return path;
}

describe('approved-script fast path (§3.6 step 1)', () => {
  const args = (dir: string, intentPath: string) => [
    'gate', 'eval', '--policy', join(dir, 'p.yaml'), '--intent', intentPath, '--approved-script-registry', join(dir, 'registry.json'),
    '--approved-script-public-key', fixture('keys/v7_public.key'), '--json',
  ];

  it('allows a registered script without evaluating the policy, and traces it as pre-approved', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'p.yaml'), POLICY);
    registry(dir, 'risk:medium');
    const r = ward(args(dir, fixture('intents/v4-script.json')), { cwd: dir });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ verdict: 'allow', reason_codes: ['approved_script_match'], pre_approved: true, pattern_id: 'read-then-write' });
    const trace = JSON.parse(readFileSync(out.trace_path, 'utf8'));
    expect(trace.pre_approved).toBe(true);
    expect(trace.pattern_id).toBe('read-then-write');
  });

  it('records why a non-script intent did not take the fast path and lets the policy decide', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'p.yaml'), POLICY);
    registry(dir, 'risk:medium');
    const r = ward(args(dir, fixture('intents/v1-approval-valid.json')), { cwd: dir });
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({ verdict: 'block', registry_reason: 'not_script', reason_codes: ['default_block'] });
  });

  it('stops high-risk decisions (exit 3, no trace) when the registry does not verify', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'p.yaml'), POLICY);
    const path = registry(dir, 'risk:high');
    writeFileSync(path, readFileSync(path, 'utf8').replace('read-then-write', 'read-then-wipe'));
    const r = ward(args(dir, fixture('intents/v1-approval-valid.json')), { cwd: dir });
    expect(r.code).toBe(3);
    const out = JSON.parse(r.stdout);
    expect(out.ok).toBe(false);
    expect(out.error).toMatch(/^approved script registry verification failed at entry 0:/);
    expect(() => readdirSync(join(dir, '.ward', 'traces'))).toThrow();
  });
});

describe('ward approve-script and ward list-scripts', () => {
  it('signs an entry the gate then honours, replaces it by pattern id, and lists it as valid', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'p.yaml'), POLICY);
    const key = v7PrivateKeyFile();
    const approve = (pattern: string) =>
      ward(
        [
          'approve-script', '--policy', 'p.yaml', '--intent', fixture('intents/v4-script.json'), '--pattern-id', pattern,
          '--approver', 'lead@example.com', '--ttl', '1h', '--scope', 'risk:high,risk:medium,risk:low', '--registry', 'registry.json', '--key-mode', 'prod', '--private-key', key, '--json',
        ],
        { cwd: dir },
      );
    const first = approve('read-then-write');
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ ok: true, entries: 1, pattern_id: 'read-then-write' });
    expect(approve('read-then-write').code).toBe(0);
    expect(JSON.parse(approve('second').stdout).entries).toBe(2);

    const gate = ward(
      ['gate', 'eval', '--policy', 'p.yaml', '--intent', fixture('intents/v4-script.json'), '--approved-script-registry', 'registry.json',
        '--approved-script-public-key', fixture('keys/v7_public.key'), '--json'],
      { cwd: dir },
    );
    expect(gate.code, gate.stdout).toBe(0);
    expect(JSON.parse(gate.stdout)).toMatchObject({ verdict: 'allow', pre_approved: true, reason_codes: ['approved_script_match'] });

    const list = ward(['list-scripts', '--registry', 'registry.json', '--public-key', fixture('keys/v7_public.key'), '--json'], { cwd: dir });
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout).entries.map((e: { pattern_id: string; status: string }) => [e.pattern_id, e.status])).toEqual([
      ['read-then-write', 'valid'],
      ['second', 'valid'],
    ]);
  });

  it('list-scripts exits 2 when an entry does not verify with the given key', () => {
    const dir = tempDir();
    registry(dir, '*');
    const other = ward(['keys', 'init', '--out-dir', join(dir, 'k'), '--json'], { cwd: dir });
    expect(other.code, other.stderr).toBe(0);
    const r = ward(['list-scripts', '--registry', 'registry.json', '--public-key', join(dir, 'k', 'ward_public.key')], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/^invalid\s+read-then-write/);
  });

  it('refuses a single tool call: those are approved per call with ward approve', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'p.yaml'), POLICY);
    const r = ward(
      ['approve-script', '--policy', 'p.yaml', '--intent', fixture('intents/v1-approval-valid.json'), '--pattern-id', 'x', '--approver', 'a',
        '--ttl', '1h', '--scope', '*', '--registry', 'r.json', '--key-mode', 'dev'],
      { cwd: dir },
    );
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(/script intent/);
  });
});
