// Golden outputs of `ward gate eval --json` (see golden.ts for what is pinned, masked and how to regenerate).
import { readdirSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  auditFile,
  auditPathsIn,
  awayFromHourBoundary,
  expectGolden,
  fixture,
  golden,
  guardInputs,
  killSwitchIn,
  killSwitchJournal,
  Masker,
  parseJsonText,
  REPO,
  runWardAsync,
  traceFile,
  tracePathsIn,
  V7_PUBLIC_KEY_FILE,
  workDir,
  type CliRun,
} from './golden.js';

guardInputs();

const POLICY = golden('inputs/policy.yaml');
const input = (name: string) => golden(`inputs/${name}`);
const TIME = '2026-03-12T12:00:00Z';

/**
 * One test's work directory (state, traces, ledger) and signing key: no case depends on another's
 * files, so the tests run concurrently.
 */
class CliCase {
  readonly dir: string;
  readonly key: string;

  constructor() {
    ({ dir: this.dir, key: this.key } = workDir('cli'));
  }

  /** Every file under `.ward/` (relative), to pin which state a decision leaves behind. */
  stateFiles(): string[] {
    const out: string[] = [];
    const walk = (d: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name);
        if (e.isDirectory()) walk(p);
        // The ledger names a consumed token by a digest of the token, which was minted at test time.
        else out.push(relative(this.dir, p).replace(/^(\.ward\/token_ledger\/approval_)[0-9a-f]{64}/, '$1<TOKEN_LEDGER_KEY>'));
      }
    };
    walk(join(this.dir, '.ward'));
    return out.sort();
  }

  async gateEval(flags: string[], opts: { input?: string; policy?: string } = {}): Promise<{ run: CliRun; argv: string[]; written: string[] }> {
    const argv = ['gate', 'eval', '--policy', opts.policy ?? POLICY, '--evaluation-time', TIME, '--key-mode', 'prod', '--private-key', this.key, '--json', ...flags];
    const before = new Set(this.stateFiles());
    const run = await runWardAsync(argv, { cwd: this.dir, ...(opts.input !== undefined ? { input: opts.input } : {}) });
    return { run, argv, written: this.stateFiles().filter((f) => !before.has(f) && !f.endsWith('.lock')) };
  }

  masker(): Masker {
    // The CLI makes up a random correlation id per process; the approve command it prints names the OS user.
    return new Masker({ correlation_id: '<CORRELATION_ID>' })
      .substitute(this.dir, '<WORK>')
      .substitute(REPO.replace(/\/$/, ''), '<REPO>')
      .substitute(`--approver ${userInfo().username} `, '--approver <USER> ');
  }

  /** Run, pin stdout (exact serialization), exit code, stderr, files written, the trace and any audit. */
  async pin(name: string, flags: string[], opts: { input?: string; policy?: string; m?: Masker } = {}): Promise<Record<string, unknown>> {
    const { run, argv, written } = await this.gateEval(flags, opts);
    const { format, value } = parseJsonText(run.stdout, `${name} stdout`);
    const out = value as Record<string, unknown>;
    const traces = tracePathsIn(out).map(traceFile);
    const audits = auditPathsIn(out).map(auditFile);
    const journal = killSwitchJournal(this.dir);
    const record = {
      argv,
      ...(opts.input !== undefined ? { stdin: opts.input } : {}),
      exit_code: run.code,
      stdout_format: format,
      stdout: out,
      stderr: run.stderr,
      state_files_written: written,
      traces,
      ...(audits.length ? { audits } : {}),
      ...(journal ? { kill_switch_journal: journal } : {}),
    };
    expectGolden(`cli/${name}`, record, opts.m ?? this.masker());
    return out;
  }

  /** `ward approve` (or `ward delegate mint`) with the V7 key; returns the token file and its id. */
  async mint(args: string[], file: string): Promise<{ path: string; tokenId: string }> {
    const path = join(this.dir, file);
    const r = await runWardAsync([...args, '--ttl', '1h', '--key-mode', 'prod', '--private-key', this.key, '--out', path, '--json'], { cwd: this.dir });
    expect(r.code, r.stderr).toBe(0);
    return { path, tokenId: String((JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>)['token_id']) };
  }

  approve(digests: Record<string, unknown>, file: string): Promise<{ path: string; tokenId: string }> {
    const args = ['approve', '--intent-digest', String(digests['intent_digest']), '--policy-digest', String(digests['policy_digest']), '--scope', 'tool:tool.write'];
    return this.mint([...args, '--approver', 'golden-approver', '--reason-code', 'golden-change'], file);
  }
}

describe.concurrent('golden: ward gate eval --json', () => {
  it('allow', async () => {
    expect((await new CliCase().pin('allow', ['--intent', input('read.json')]))['verdict']).toBe('allow');
  });

  it('block by rule', async () => {
    expect((await new CliCase().pin('block-rule', ['--intent', input('delete.json')]))['verdict']).toBe('block');
  });

  it('block by default verdict', async () => {
    expect((await new CliCase().pin('block-default', ['--intent', input('deploy-undelegated.json')]))['verdict']).toBe('block');
  });

  it('require_approval without a token, then allow with a valid token (consumed once, then refused)', async () => {
    const c = new CliCase();
    const out = await c.pin('approval-missing', ['--intent', input('write.json')]);
    expect(out['verdict']).toBe('require_approval');
    const token = await c.approve(out, 'approval-token.json');
    const flags = ['--intent', input('write.json'), '--approval-token', token.path, '--approval-public-key', V7_PUBLIC_KEY_FILE];
    expect((await c.pin('approval-granted', flags, { m: c.masker().substitute(token.tokenId, '<APPROVAL_TOKEN_ID>') }))['verdict']).toBe('allow');
    expect((await c.pin('approval-consumed', flags, { m: c.masker().substitute(token.tokenId, '<APPROVAL_TOKEN_ID>') }))['verdict']).toBe('require_approval');
  });

  it('approval token for another intent', async () => {
    const c = new CliCase();
    const other = JSON.parse((await c.gateEval(['--intent', input('read.json')])).run.stdout) as Record<string, unknown>;
    const token = await c.approve(other, 'approval-wrong.json');
    const flags = ['--intent', input('write.json'), '--approval-token', token.path, '--approval-public-key', V7_PUBLIC_KEY_FILE];
    expect((await c.pin('approval-wrong-intent', flags, { m: c.masker().substitute(token.tokenId, '<APPROVAL_TOKEN_ID>') }))['verdict']).toBe('require_approval');
  });

  it('delegation required, token missing', async () => {
    expect((await new CliCase().pin('delegation-missing', ['--intent', input('deploy.json')]))['verdict']).toBe('block');
  });

  it('delegation granted with a valid token', async () => {
    const c = new CliCase();
    const token = await c.mint(['delegate', 'mint', '--delegator', 'agent.lead', '--delegate', 'agent.worker', '--scope', 'deploy', '--scope-class', 'deploy'], 'delegation-token.json');
    const flags = ['--intent', input('deploy.json'), '--delegation-token', token.path, '--delegation-public-key', V7_PUBLIC_KEY_FILE];
    expect((await c.pin('delegation-granted', flags, { m: c.masker().substitute(token.tokenId, '<DELEGATION_TOKEN_ID>') }))['verdict']).toBe('allow');
  });

  it('context envelope (gate.md §11 V7: the context-proof policy and envelope)', async () => {
    const flags = ['--intent', fixture('intents/v1-approval-valid.json'), '--context-envelope', fixture('envelopes/v7-envelope.json')];
    expect((await new CliCase().pin('context-envelope-v7', flags, { policy: fixture('policies/context-proof.yaml') }))['verdict']).toBe('block');
  });

  it('kill switch active', async () => {
    const c = new CliCase();
    expect((await c.pin('kill-switch', ['--intent', input('read.json'), '--kill-switch-state', killSwitchIn(c.dir)]))['verdict']).toBe('block');
  });

  it('kill switch state unreadable', async () => {
    const c = new CliCase();
    expect((await c.pin('kill-switch-unavailable', ['--intent', input('read.json'), '--kill-switch-state', join(c.dir, 'no-such-kill-switch.json')]))['ok']).toBe(false);
  });

  it('rate limit: first call allowed, second exceeded', async () => {
    const c = new CliCase();
    await awayFromHourBoundary();
    expect((await c.pin('rate-limit-first', ['--intent', input('search.json')]))['verdict']).toBe('allow');
    expect((await c.pin('rate-limit-exceeded', ['--intent', input('search.json')]))['verdict']).toBe('block');
  });

  it('unevaluable intent in a fail-closed risk class blocks, traced', async () => {
    expect((await new CliCase().pin('unevaluable', ['--intent', input('unevaluable.json')]))['verdict']).toBe('block');
  });

  it('fail-closed required field missing', async () => {
    expect((await new CliCase().pin('fail-closed-missing-field', ['--intent', input('high-risk-missing.json')]))['verdict']).toBe('block');
  });

  it('script intent', async () => {
    expect((await new CliCase().pin('script', ['--intent', input('script.json')]))['script']).toBe(true);
  });

  it('simulate', async () => {
    expect((await new CliCase().pin('simulate', ['--intent', input('delete.json'), '--simulate']))['simulate_mode']).toBe(true);
  });

  it('explain', async () => {
    expect((await new CliCase().pin('explain', ['--intent', input('write.json'), '--explain']))['schema_id']).toBe('gait.gate.policy_explain');
  });

  it('gait trace format', async () => {
    const c = new CliCase();
    expect((await c.pin('trace-format-gait', ['--intent', input('delete.json'), '--trace-format', 'gait', '--trace-out', join(c.dir, 'gait-trace.json')]))['verdict']).toBe('block');
  });

  it('capture intents: the decision capture beside the trace', async () => {
    const c = new CliCase();
    const out = await c.pin('capture-intents', ['--intent', input('write.json'), '--capture-intents']);
    const captures = readdirSync(join(c.dir, '.ward', 'traces')).filter((n) => n.startsWith('capture_'));
    expect(captures).toHaveLength(1);
    const text = readFileSync(join(c.dir, '.ward', 'traces', captures[0]!), 'utf8');
    const { format, value } = parseJsonText(text, 'capture');
    // The trace (with its event id, which names the capture) is in the record, so the name is masked alike.
    const trace = traceFile(String(out['trace_path']));
    expectGolden('cli/capture-intents-file', { name: captures[0], format, capture: value, trace }, c.masker());
  });

  it('human-readable output (no --json): allow, block, require_approval, error', async () => {
    const c = new CliCase();
    const human = async (flags: string[]) => {
      const argv = ['gate', 'eval', '--policy', POLICY, '--evaluation-time', TIME, '--key-mode', 'prod', '--private-key', c.key, ...flags];
      const run = await runWardAsync(argv, { cwd: c.dir });
      return { argv, exit_code: run.code, stdout: run.stdout, stderr: run.stderr };
    };
    const runs = {
      allow: await human(['--intent', input('read.json')]),
      block: await human(['--intent', input('delete.json')]),
      require_approval: await human(['--intent', input('write.json')]),
      error: await human(['--intent', join(c.dir, 'missing.json')]),
    };
    expectGolden('cli/human-output', runs, c.masker());
  });

  it('malformed intent JSON: exit 6, error envelope, no trace', async () => {
    expect((await new CliCase().pin('intent-malformed', ['--intent', '-'], { input: '{"tool_name": ' }))['ok']).toBe(false);
  });

  it('intent missing context.identity: exit 6', async () => {
    expect((await new CliCase().pin('intent-invalid', ['--intent', '-'], { input: JSON.stringify({ tool_name: 'tool.read' }) }))['ok']).toBe(false);
  });

  it('decoder edges (Go encoding/json rules): null in a string list, large and fractional integers, null and mistyped fields', async () => {
    const base = JSON.parse(readFileSync(input('read.json'), 'utf8')) as Record<string, unknown>;
    const ctx = base['context'] as Record<string, unknown>;
    // Number texts are sent as written (JSON.stringify would round them first).
    const withTtl = (text: string) => JSON.stringify({ ...base, context: { ...ctx, credential_ttl_seconds: '@TTL' } }).replace('"@TTL"', text);
    const variants: [string, string][] = [
      ['null-in-string-list', JSON.stringify({ ...base, context: { ...ctx, credential_scopes: ['b', null, 'a'] } })],
      ['int-above-2-53', withTtl('9007199254740993')],
      ['int-beyond-int64', withTtl('100000000000000000000')],
      ['int-fractional', withTtl('1.5')],
      ['int-as-float-text', withTtl('300.0')],
      ['null-identity', JSON.stringify({ ...base, context: { ...ctx, identity: null } })],
      ['mistyped-tool-name', JSON.stringify({ ...base, tool_name: 5 })],
      ['null-target', JSON.stringify({ ...base, targets: [null] })],
    ];
    await Promise.all(variants.map(([name, text]) => new CliCase().pin(`decoder-${name}`, ['--intent', '-'], { input: text })));
  });
});
