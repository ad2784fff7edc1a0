// Golden outputs of `ward gate eval --json` (see golden.ts for what is pinned, masked and how to regenerate).
import { readdirSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join, relative } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { REPO, killSwitchIn, killSwitchJournal, auditFile, auditPathsIn, fixture, tracePathsIn, awayFromHourBoundary, expectGolden, golden, Masker, parseJsonText, runWard, traceFile, V7_PUBLIC_KEY_FILE, workDir, type CliRun, guardInputs } from './golden.js';

guardInputs();

const POLICY = golden('inputs/policy.yaml');
const input = (name: string) => golden(`inputs/${name}`);
const TIME = '2026-03-12T12:00:00Z';

// Each test gets its own work directory (state, traces, ledger), so no case depends on another's files.
let dir: string;
let key: string;
beforeEach(() => ({ dir, key } = workDir('cli')));

/** Every file under `.ward/` (relative), to pin which state a decision leaves behind. */
function stateFiles(): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      // The ledger names a consumed token by a digest of the token, which was minted at test time.
      else out.push(relative(dir, p).replace(/^(\.ward\/token_ledger\/approval_)[0-9a-f]{64}/, '$1<TOKEN_LEDGER_KEY>'));
    }
  };
  walk(join(dir, '.ward'));
  return out.sort();
}

function gateEval(flags: string[], opts: { input?: string; policy?: string } = {}): { run: CliRun; argv: string[]; written: string[] } {
  const argv = ['gate', 'eval', '--policy', opts.policy ?? POLICY, '--evaluation-time', TIME, '--key-mode', 'prod', '--private-key', key, '--json', ...flags];
  const before = new Set(stateFiles());
  const run = runWard(argv, { cwd: dir, ...(opts.input !== undefined ? { input: opts.input } : {}) });
  return { run, argv, written: stateFiles().filter((f) => !before.has(f) && !f.endsWith('.lock')) };
}

function masker(): Masker {
  // The CLI makes up a random correlation id per process; the approve command it prints names the OS user.
  return new Masker({ correlation_id: '<CORRELATION_ID>' })
    .substitute(dir, '<WORK>')
    .substitute(REPO.replace(/\/$/, ''), '<REPO>')
    .substitute(`--approver ${userInfo().username} `, '--approver <USER> ');
}

/** Run, pin stdout (exact serialization), exit code, stderr, files written and the trace. */
function pin(name: string, flags: string[], opts: { input?: string; policy?: string; m?: Masker } = {}): Record<string, unknown> {
  const { run, argv, written } = gateEval(flags, opts);
  const { format, value } = parseJsonText(run.stdout, `${name} stdout`);
  const out = value as Record<string, unknown>;
  const traces = tracePathsIn(out).map(traceFile);
  const audits = auditPathsIn(out).map(auditFile);
  const journal = killSwitchJournal(dir);
  const record = { argv, exit_code: run.code, stdout_format: format, stdout: out, stderr: run.stderr, state_files_written: written, traces, ...(audits.length ? { audits } : {}), ...(journal ? { kill_switch_journal: journal } : {}) };
  expectGolden(`cli/${name}`, record, opts.m ?? masker());
  return out;
}

describe('golden: ward gate eval --json', () => {
  it('allow', () => {
    expect(pin('allow', ['--intent', input('read.json')])['verdict']).toBe('allow');
  });

  it('block by rule', () => {
    expect(pin('block-rule', ['--intent', input('delete.json')])['verdict']).toBe('block');
  });

  it('block by default verdict', () => {
    expect(pin('block-default', ['--intent', input('deploy-undelegated.json')])['verdict']).toBe('block');
  });

  it('require_approval without a token, then allow with a valid token (consumed once, then refused)', () => {
    const out = pin('approval-missing', ['--intent', input('write.json')]);
    expect(out['verdict']).toBe('require_approval');
    const tokenPath = join(dir, 'approval-token.json');
    const minted = runWard(
      [
        'approve', '--intent-digest', String(out['intent_digest']), '--policy-digest', String(out['policy_digest']), '--scope', 'tool:tool.write',
        '--ttl', '1h', '--approver', 'golden-approver', '--reason-code', 'golden-change', '--key-mode', 'prod', '--private-key', key, '--out', tokenPath, '--json',
      ],
      { cwd: dir },
    );
    expect(minted.code, minted.stderr).toBe(0);
    const token = JSON.parse(readFileSync(tokenPath, 'utf8')) as Record<string, unknown>;
    const m = masker().substitute(String(token['token_id']), '<APPROVAL_TOKEN_ID>');
    const flags = ['--intent', input('write.json'), '--approval-token', tokenPath, '--approval-public-key', V7_PUBLIC_KEY_FILE];
    expect(pin('approval-granted', flags, { m })['verdict']).toBe('allow');
    expect(pin('approval-consumed', flags, { m: masker().substitute(String(token['token_id']), '<APPROVAL_TOKEN_ID>') })['verdict']).toBe('require_approval');
  });

  it('approval token for another intent', () => {
    const out = gateEval(['--intent', input('read.json')]).run.stdout;
    const digests = JSON.parse(out) as Record<string, string>;
    const tokenPath = join(dir, 'approval-wrong.json');
    const minted = runWard(
      [
        'approve', '--intent-digest', digests['intent_digest']!, '--policy-digest', digests['policy_digest']!, '--scope', 'tool:tool.write',
        '--ttl', '1h', '--approver', 'golden-approver', '--reason-code', 'golden-change', '--key-mode', 'prod', '--private-key', key, '--out', tokenPath, '--json',
      ],
      { cwd: dir },
    );
    expect(minted.code, minted.stderr).toBe(0);
    const token = JSON.parse(readFileSync(tokenPath, 'utf8')) as Record<string, unknown>;
    const m = masker().substitute(String(token['token_id']), '<APPROVAL_TOKEN_ID>');
    const flags = ['--intent', input('write.json'), '--approval-token', tokenPath, '--approval-public-key', V7_PUBLIC_KEY_FILE];
    expect(pin('approval-wrong-intent', flags, { m })['verdict']).toBe('require_approval');
  });

  it('delegation required, token missing', () => {
    expect(pin('delegation-missing', ['--intent', input('deploy.json')])['verdict']).toBe('block');
  });

  it('delegation granted with a valid token', () => {
    const tokenPath = join(dir, 'delegation-token.json');
    const minted = runWard(
      ['delegate', 'mint', '--delegator', 'agent.lead', '--delegate', 'agent.worker', '--scope', 'deploy', '--scope-class', 'deploy', '--ttl', '1h', '--key-mode', 'prod', '--private-key', key, '--out', tokenPath, '--json'],
      { cwd: dir },
    );
    expect(minted.code, minted.stderr).toBe(0);
    const token = JSON.parse(readFileSync(tokenPath, 'utf8')) as Record<string, unknown>;
    const m = masker().substitute(String(token['token_id']), '<DELEGATION_TOKEN_ID>');
    const flags = ['--intent', input('deploy.json'), '--delegation-token', tokenPath, '--delegation-public-key', V7_PUBLIC_KEY_FILE];
    expect(pin('delegation-granted', flags, { m })['verdict']).toBe('allow');
  });

  it('context envelope (gate.md §11 V7: the context-proof policy and envelope)', () => {
    const flags = ['--intent', fixture('intents/v1-approval-valid.json'), '--context-envelope', fixture('envelopes/v7-envelope.json')];
    expect(pin('context-envelope-v7', flags, { policy: fixture('policies/context-proof.yaml') })['verdict']).toBe('block');
  });

  it('kill switch active', () => {
    expect(pin('kill-switch', ['--intent', input('read.json'), '--kill-switch-state', killSwitchIn(dir)])['verdict']).toBe('block');
  });

  it('kill switch state unreadable', () => {
    expect(pin('kill-switch-unavailable', ['--intent', input('read.json'), '--kill-switch-state', join(dir, 'no-such-kill-switch.json')])['ok']).toBe(false);
  });

  it('rate limit: first call allowed, second exceeded', async () => {
    await awayFromHourBoundary();
    expect(pin('rate-limit-first', ['--intent', input('search.json')])['verdict']).toBe('allow');
    expect(pin('rate-limit-exceeded', ['--intent', input('search.json')])['verdict']).toBe('block');
  });

  it('unevaluable intent in a fail-closed risk class blocks, traced', () => {
    expect(pin('unevaluable', ['--intent', input('unevaluable.json')])['verdict']).toBe('block');
  });

  it('fail-closed required field missing', () => {
    expect(pin('fail-closed-missing-field', ['--intent', input('high-risk-missing.json')])['verdict']).toBe('block');
  });

  it('script intent', () => {
    expect(pin('script', ['--intent', input('script.json')])['script']).toBe(true);
  });

  it('simulate', () => {
    expect(pin('simulate', ['--intent', input('delete.json'), '--simulate'])['simulate_mode']).toBe(true);
  });

  it('explain', () => {
    expect(pin('explain', ['--intent', input('write.json'), '--explain'])['schema_id']).toBe('gait.gate.policy_explain');
  });

  it('gait trace format', () => {
    expect(pin('trace-format-gait', ['--intent', input('delete.json'), '--trace-format', 'gait', '--trace-out', join(dir, 'gait-trace.json')])['verdict']).toBe('block');
  });

  it('capture intents: the decision capture beside the trace', () => {
    const out = pin('capture-intents', ['--intent', input('write.json'), '--capture-intents']);
    const captures = readdirSync(join(dir, '.ward', 'traces')).filter((n) => n.startsWith('capture_'));
    expect(captures).toHaveLength(1);
    const text = readFileSync(join(dir, '.ward', 'traces', captures[0]!), 'utf8');
    const { format, value } = parseJsonText(text, 'capture');
    // The trace (with its event id, which names the capture) is in the record, so the name is masked alike.
    const trace = traceFile(String(out['trace_path']));
    expectGolden('cli/capture-intents-file', { name: captures[0], format, capture: value, trace }, masker());
  });

  it('human-readable output (no --json): allow, block, require_approval, error', () => {
    const human = (flags: string[]) => {
      const argv = ['gate', 'eval', '--policy', POLICY, '--evaluation-time', TIME, '--key-mode', 'prod', '--private-key', key, ...flags];
      const run = runWard(argv, { cwd: dir });
      return { argv, exit_code: run.code, stdout: run.stdout, stderr: run.stderr };
    };
    const runs = {
      allow: human(['--intent', input('read.json')]),
      block: human(['--intent', input('delete.json')]),
      require_approval: human(['--intent', input('write.json')]),
      error: human(['--intent', join(dir, 'missing.json')]),
    };
    expectGolden('cli/human-output', runs, masker());
  });

  it('malformed intent JSON: exit 6, error envelope, no trace', () => {
    expect(pin('intent-malformed', ['--intent', '-'], { input: '{"tool_name": ' })['ok']).toBe(false);
  });

  it('intent missing context.identity: exit 6', () => {
    expect(pin('intent-invalid', ['--intent', '-'], { input: JSON.stringify({ tool_name: 'tool.read' }) })['ok']).toBe(false);
  });
});
