import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseJsonText, parseRFC3339, sha256Hex, type JsonObject } from '../../src/canon/index.js';
import { parseContextEnvelope } from '../../src/context/index.js';
import { evaluate } from '../../src/gate/evaluate.js';
import { normalizedIntentJson } from '../../src/intent/digest.js';
import { normalizeIntent } from '../../src/intent/normalize.js';
import { loadPolicyFile } from '../../src/policy/load.js';
import {
  recordsFromRunpack,
  recordsFromTraceDir,
  REGRESS_REASON_CODES,
  renderReplayJson,
  renderReplayJunit,
  renderReplayMarkdown,
  replayPolicy,
  type ReplayReport,
} from '../../src/regress/index.js';
import { ward, workdir } from '../pack/cli.js';
import { REPO } from '../cli/run.js';
import { DEMO_INPUT, record } from './helpers.js';
import { checkJunit } from './xml.js';

const HIGHRISK = join(REPO, 'policies/baseline-highrisk.yaml');
const ALLOW_ALL = join(REPO, 'fixtures/policies/default-allow.yaml');
const BLOCK_ALL = join(REPO, 'fixtures/policies/context-proof.yaml');
const QUICKSTART = ['read-report', 'delete-database', 'write-config'].map((n) => join(REPO, 'examples/quickstart', `${n}.json`));
const ENVELOPE = readFileSync(join(REPO, 'fixtures/runs/context_envelope_demo.json'), 'utf8');

/** Replay reason codes seen in this file's reports; afterAll checks the registry's replay codes are all exercised. */
const seen = new Set<string>();
function observe(report: ReplayReport): ReplayReport {
  for (const c of report.changes) seen.add(c.change);
  for (const n of report.not_replayable) seen.add(n.reason_code);
  if (report.status === 'fail') seen.add('policy_loosened');
  return report;
}
afterAll(() => {
  const replayCodes = Object.entries(REGRESS_REASON_CODES).filter(([, i]) => i.source === 'replay').map(([c]) => c);
  expect(replayCodes.filter((c) => !seen.has(c))).toEqual([]);
});

let counter = 0;
/** A decision capture as `gate eval --capture-intents` writes it (seam shape), decided by `policyPath`. */
function capture(intentPath: string, policyPath: string, time: string, envelope?: string, recordedOverride?: Partial<JsonObject>): JsonObject {
  const raw = parseJsonText(readFileSync(intentPath, 'utf8'));
  const policy = loadPolicyFile(policyPath);
  const outcome = evaluate(policy, raw, { now: parseRFC3339(time), ...(envelope ? { contextEnvelope: parseContextEnvelope(envelope) } : {}) });
  const id = sha256Hex(String(counter++)).slice(0, 24);
  return {
    schema_id: 'ward.decision_capture',
    schema_version: '1.0.0',
    trace_id: id,
    event_id: id,
    evaluation_time: time,
    policy_digest: policy.digest,
    intent_digest: 'b'.repeat(64),
    tool_name: outcome.preparedIntent!.tool_name,
    verdict: outcome.verdict,
    reason_codes: outcome.reasonCodes,
    matched_rule: outcome.matchedRule,
    intent: normalizedIntentJson(normalizeIntent(raw)),
    ...(envelope ? { context_envelope: JSON.parse(envelope) as JsonObject } : {}),
    ...recordedOverride,
  };
}

function traceDir(captures: JsonObject[], extraTraces: { event_id: string; tool_name: string }[] = []): string {
  const dir = join(workdir(), 'traces');
  mkdirSync(dir);
  for (const c of captures) {
    writeFileSync(join(dir, `capture_${c['event_id']}.json`), JSON.stringify(c, null, 2));
    writeFileSync(join(dir, `trace_${c['trace_id']}.json`), JSON.stringify({ schema_id: 'gait.gate.trace', event_id: c['event_id'], trace_id: c['trace_id'], tool_name: c['tool_name'] }));
  }
  for (const t of extraTraces) writeFileSync(join(dir, `trace_${t.event_id}.json`), JSON.stringify({ schema_id: 'gait.gate.trace', ...t }));
  return dir;
}

const T = '2026-11-21T09:00:00Z';
const recordedUnderHighrisk = () => QUICKSTART.map((p) => capture(p, HIGHRISK, T));

describe('policy replay (core)', () => {
  it('passes when the candidate is the recorded policy: nothing changes', () => {
    const report = observe(replayPolicy(recordsFromTraceDir(traceDir(recordedUnderHighrisk())), { candidate: loadPolicyFile(HIGHRISK) }));
    expect(report.status).toBe('pass');
    expect(report.summary).toMatchObject({ records: 3, replayed: 3, unchanged: 3, loosened: 0 });
    expect(report.changes).toEqual([]);
  });

  it('catches a loosening (block and require_approval to allow), grouped by tool and rule with counts', () => {
    const report = observe(replayPolicy(recordsFromTraceDir(traceDir(recordedUnderHighrisk())), { candidate: loadPolicyFile(ALLOW_ALL) }));
    expect(report.status).toBe('fail');
    expect(report.summary).toMatchObject({ replayed: 3, loosened: 2, reasons_changed: 1 });
    expect(report.transitions).toEqual({ 'block->allow': 1, 'require_approval->allow': 1 });
    expect(report.by_tool['fs.delete_file']).toMatchObject({ replayed: 1, loosened: 1 });
    expect(report.by_rule['(default)']).toMatchObject({ replayed: 3, loosened: 2 });
    const del = report.changes.find((c) => c.tool_name === 'fs.delete_file')!;
    expect(del).toMatchObject({
      change: 'policy_loosened',
      baseline: { verdict: 'block', matched_rule: 'block-destructive-tools' },
      candidate: { verdict: 'allow' },
      reasons_added: ['default_allow'],
      reasons_removed: ['destructive_apply_requires_approval', 'matched_rule_block_destructive_tools'],
    });
    expect(replayPolicy(recordsFromTraceDir(traceDir(recordedUnderHighrisk())), { candidate: loadPolicyFile(ALLOW_ALL), allowLoosening: true }).status).toBe('pass');
  });

  it('reports tightening and changes between non-allow verdicts, and a baseline policy replaces the record', () => {
    const tightened = observe(replayPolicy(recordsFromTraceDir(traceDir(recordedUnderHighrisk())), { candidate: loadPolicyFile(BLOCK_ALL) }));
    expect(tightened.status).toBe('pass');
    expect(tightened.summary).toMatchObject({ tightened: 1, verdict_changed: 1 });
    expect(tightened.transitions).toEqual({ 'allow->block': 1, 'require_approval->block': 1 });
    const vsPolicy = replayPolicy(recordsFromTraceDir(traceDir(QUICKSTART.map((p) => capture(p, ALLOW_ALL, T)))), {
      candidate: loadPolicyFile(ALLOW_ALL),
      baseline: loadPolicyFile(HIGHRISK),
    });
    expect(vsPolicy.baseline).toBe(loadPolicyFile(HIGHRISK).digest);
    expect(vsPolicy.summary.loosened).toBe(2);
  });

  it('evaluates at the recorded evaluation_time with the recorded envelope, never the wall clock', () => {
    const intent = join(REPO, 'fixtures/intents/v1-approval-valid.json');
    const fresh = capture(intent, BLOCK_ALL, '2026-02-05T09:59:10Z', ENVELOPE);
    expect(fresh['verdict']).toBe('allow');
    const report = replayPolicy(recordsFromTraceDir(traceDir([fresh])), { candidate: loadPolicyFile(BLOCK_ALL) });
    expect(report.summary.unchanged).toBe(1);
    // The same capture ten minutes later is stale: the envelope freshness rule blocks.
    const stale = replayPolicy(recordsFromTraceDir(traceDir([{ ...fresh, evaluation_time: '2026-02-05T10:10:00Z' }])), { candidate: loadPolicyFile(BLOCK_ALL) });
    expect(stale.changes[0]).toMatchObject({ change: 'policy_tightened', reasons_added: ['context_freshness_exceeded'] });
  });

  it('compares the policy part of a recorded decision: approvals and simulate undone', () => {
    const write = capture(QUICKSTART[2]!, HIGHRISK, T);
    const approved = { ...write, verdict: 'allow', reason_codes: [...(write['reason_codes'] as string[]), 'approval_granted'] };
    const simulated = { ...capture(QUICKSTART[1]!, HIGHRISK, T), verdict: 'allow', reason_codes: ['destructive_apply_requires_approval', 'matched_rule_block_destructive_tools', 'simulate_mode_non_enforcing', 'simulated_block'] };
    const report = replayPolicy(recordsFromTraceDir(traceDir([approved, simulated])), { candidate: loadPolicyFile(HIGHRISK) });
    expect(report.summary).toMatchObject({ replayed: 2, unchanged: 2 });
    const limited = { ...write, verdict: 'block', reason_codes: [...(write['reason_codes'] as string[]), 'rate_limit_exceeded'] };
    const r = replayPolicy(recordsFromTraceDir(traceDir([limited])), { candidate: loadPolicyFile(ALLOW_ALL) });
    // Fail safe: a block forced by a rate limit still counts, with a note saying why.
    expect(r.changes[0]).toMatchObject({ change: 'policy_loosened' });
    expect(r.changes[0]!.notes![0]).toContain('rate_limit_exceeded');
  });

  it('reports evaluation errors and records it cannot replay, never dropping them', () => {
    const broken = { ...capture(QUICKSTART[0]!, HIGHRISK, T), context_envelope: { schema_id: 'nope' } };
    const unevaluable = { ...capture(QUICKSTART[0]!, HIGHRISK, T), intent_error: 'tool_name is required' } as JsonObject;
    delete unevaluable['intent'];
    const dir = traceDir([broken, unevaluable], [{ event_id: 'f'.repeat(24), tool_name: 'fs.read_file' }]);
    writeFileSync(join(dir, 'capture_garbage.json'), '{');
    const report = observe(replayPolicy(recordsFromTraceDir(dir), { candidate: loadPolicyFile(HIGHRISK) }));
    expect(report.summary).toMatchObject({ records: 4, replayed: 1, error: 1, not_replayable: 3 });
    expect(report.changes[0]).toMatchObject({ change: 'replay_evaluation_error', candidate: { verdict: 'error', reason_codes: ['replay_evaluation_error'] } });
    expect(report.not_replayable.map((n) => n.reason_code).sort()).toEqual(['not_replayable_invalid', 'not_replayable_invalid', 'not_replayable_no_capture']);
  });

  it('replays runpack intents only with args and gate context', () => {
    const reference = recordsFromRunpack(record({}).bytes, 'run.zip');
    expect(reference.not_replayable.map((n) => n.reason_code)).toEqual(['not_replayable_no_args', 'not_replayable_no_args', 'not_replayable_no_args']);
    const raw = record({ captureMode: 'raw' }, DEMO_INPUT).bytes;
    const noContext = recordsFromRunpack(raw, 'run.zip');
    expect(noContext.not_replayable.map((n) => n.reason_code)).toContain('not_replayable_no_context');
    for (const n of [...reference.not_replayable, ...noContext.not_replayable]) seen.add(n.reason_code);
    const context = { identity: 'agent', workspace: '/w', risk_class: 'low' };
    const input = recordsFromRunpack(raw, 'run.zip', context);
    expect(input.records.map((r) => r.id)).toEqual(['run_demo/intent_1', 'run_demo/intent_2']);
    const report = observe(replayPolicy(input, { candidate: loadPolicyFile(BLOCK_ALL) }));
    expect(report.summary).toMatchObject({ replayed: 2, tightened: 2 });
    expect(input.not_replayable).toEqual([expect.objectContaining({ id: 'run_demo/intent_3', reason_code: 'not_replayable_no_args' })]);
  });

  it('is deterministic: same input, byte-identical JSON, Markdown and JUnit', () => {
    const dir = traceDir(recordedUnderHighrisk());
    const run = () => replayPolicy(recordsFromTraceDir(dir), { candidate: loadPolicyFile(ALLOW_ALL) });
    const a = run();
    const b = run();
    expect(renderReplayJson(a)).toBe(renderReplayJson(b));
    expect(renderReplayMarkdown(a)).toBe(renderReplayMarkdown(b));
    expect(renderReplayJunit(a)).toBe(renderReplayJunit(b));
  });

  it('renders a Markdown PR summary and JUnit that fails per tool', () => {
    const report = replayPolicy(recordsFromTraceDir(traceDir(recordedUnderHighrisk())), { candidate: loadPolicyFile(ALLOW_ALL) });
    const md = renderReplayMarkdown(report);
    expect(md).toContain('**FAIL: 2 decisions would get looser**');
    expect(md).toContain('| block → allow | 1 |');
    expect(md).toContain('### Loosened (2)');
    expect(checkJunit(renderReplayJunit(report))).toEqual([
      { classname: 'policy_replay', name: 'fs.delete_file', failure: 'policy_loosened: 1 of 1 decisions' },
      { classname: 'policy_replay', name: 'fs.read_file' },
      { classname: 'policy_replay', name: 'fs.write_file', failure: 'policy_loosened: 1 of 1 decisions' },
    ]);
  });
});

describe('ward regress replay (CLI)', () => {
  async function captured(): Promise<string> {
    const cwd = workdir();
    for (const intent of QUICKSTART) {
      const r = await ward(['gate', 'eval', '--policy', HIGHRISK, '--intent', intent, '--capture-intents', '--json'], cwd);
      expect([0, 3, 4]).toContain(r.code);
    }
    return cwd;
  }

  it('exits 0 when nothing gets looser and 5 when something does, from traces and from the store', async () => {
    const cwd = await captured();
    const same = await ward(['regress', 'replay', '--policy', HIGHRISK, '--from', '.ward/traces', '--json'], cwd);
    expect(same.code).toBe(0);
    expect(same.json).toMatchObject({ ok: true, status: 'pass', summary: { replayed: 3, unchanged: 3 } });
    const looser = await ward(['regress', 'replay', '--policy', ALLOW_ALL, '--from', '.ward/traces', '--markdown', 'pr.md', '--junit', 'replay.xml', '--output', 'replay.json'], cwd);
    expect(looser.code).toBe(5);
    expect(looser.stdout).toContain('LOOSER fs.delete_file block -> allow');
    expect(readFileSync(join(cwd, 'pr.md'), 'utf8')).toContain('FAIL: 2 decisions would get looser');
    expect(checkJunit(readFileSync(join(cwd, 'replay.xml'), 'utf8')).filter((c) => c.failure)).toHaveLength(2);
    expect(JSON.parse(readFileSync(join(cwd, 'replay.json'), 'utf8')).summary.loosened).toBe(2);
    expect((await ward(['regress', 'replay', '--policy', ALLOW_ALL, '--from', '.ward/traces', '--allow-loosening'], cwd)).code).toBe(0);
    const store = await ward(['regress', 'replay', '--policy', ALLOW_ALL, '--from', 'store', '--tool', 'fs.delete_file', '--json'], cwd);
    expect(store.code).toBe(5);
    expect(store.json.summary).toMatchObject({ replayed: 1, loosened: 1 });
    expect(store.json.changes[0].source).toMatch(/^store:capture\//);
  });

  it('writes byte-identical reports for the same input', async () => {
    const cwd = await captured();
    for (const out of ['a.json', 'b.json']) await ward(['regress', 'replay', '--policy', ALLOW_ALL, '--from', '.ward/traces', '--output', out], cwd);
    expect(readFileSync(join(cwd, 'a.json'))).toEqual(readFileSync(join(cwd, 'b.json')));
  });

  it('exits 6 on usage errors', async () => {
    const cwd = await captured();
    expect((await ward(['regress', 'replay', '--policy', 'missing.yaml', '--from', '.ward/traces', '--json'], cwd)).code).toBe(6);
    expect((await ward(['regress', 'replay', '--policy', HIGHRISK, '--from', '.ward/traces', '--tool', 'x', '--json'], cwd)).json.error).toContain('--from store only');
    expect((await ward(['regress', 'replay', '--policy', HIGHRISK, '--from', 'store', '--since', 'yesterday', '--json'], cwd)).code).toBe(6);
    expect((await ward(['regress', 'replay', '--policy', HIGHRISK, '--from', 'nothing_here', '--json'], cwd)).code).toBe(6);
    expect((await ward(['regress', 'replay', '--from', '.ward/traces', '--json'], cwd)).code).toBe(6);
  });
});
