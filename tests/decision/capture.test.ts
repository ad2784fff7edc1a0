import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseJsonText } from '../../src/canon/json.js';
import { parseContextEnvelope } from '../../src/context/index.js';
import { evaluate } from '../../src/gate/evaluate.js';
import { intentDigest, normalizedIntentJson } from '../../src/intent/digest.js';
import { normalizeIntent } from '../../src/intent/normalize.js';
import { loadPolicyFile } from '../../src/policy/load.js';
import { parseDecisionCapture } from '../../src/trace/capture.js';
import { fixture, tempDir, v7PrivateKeyFile, ward } from '../cli/run.js';

const V7_POLICY = fixture('policies/context-proof.yaml');

describe('normalizedIntentJson', () => {
  it.each(['v1-approval-valid', 'v3-equivalent-b', 'v4-script', 'v5-delegated', 'v6-torture'])(
    '%s normalizes again to the same intent digest',
    (name) => {
      const first = normalizeIntent(parseJsonText(readFileSync(fixture(`intents/${name}.json`), 'utf8')));
      const again = normalizeIntent(normalizedIntentJson(first));
      expect(intentDigest(again)).toBe(intentDigest(first));
      expect(normalizedIntentJson(again)).toEqual(normalizedIntentJson(first));
    },
  );
});

describe('ward gate eval --capture-intents', () => {
  let dir: string;
  beforeAll(() => {
    dir = tempDir('ward-capture-');
  });

  const evalArgs = (extra: string[]) => [
    'gate', 'eval', '--policy', V7_POLICY, '--intent', fixture('intents/v1-approval-valid.json'),
    '--context-envelope', fixture('envelopes/v7-envelope.json'), '--evaluation-time', '2026-03-12T12:00:00Z',
    '--key-mode', 'prod', '--private-key', v7PrivateKeyFile(), '--json', ...extra,
  ];

  it('writes no capture unless asked', () => {
    const state = join(dir, 'off');
    expect(ward(evalArgs(['--state-dir', state]), { cwd: dir }).code).toBe(3);
    expect(readdirSync(join(state, 'traces')).filter((n) => n.startsWith('capture_'))).toEqual([]);
  });

  it('keeps the normalized intent and the envelope, and replaying them reproduces the decision', () => {
    const state = join(dir, 'on');
    const r = ward(evalArgs(['--state-dir', state, '--capture-intents']), { cwd: dir });
    expect(r.code).toBe(3);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    const names = readdirSync(join(state, 'traces')).filter((n) => n.startsWith('capture_'));
    expect(names).toHaveLength(1);
    const file = join(state, 'traces', names[0]!);
    const capture = parseDecisionCapture(readFileSync(file));
    const trace = JSON.parse(readFileSync(String(out['trace_path']), 'utf8')) as Record<string, unknown>;
    expect(names[0]).toBe(`capture_${String(trace['event_id'])}.json`);
    expect(capture).toMatchObject({
      trace_id: out['trace_id'],
      event_id: trace['event_id'],
      intent_digest: '5a851409b8a555437e75559fdae924b969b53b3e9d5dce1806ac4e005ebd8d2b',
      verdict: 'block',
      reason_codes: ['context_freshness_exceeded', 'matched_rule_allow_with_context_proof'],
      tool_name: 'tool.write',
    });
    expect(capture.raw['evaluation_time']).toBe('2026-03-12T12:00:00Z');
    expect(capture.context_envelope).toEqual(JSON.parse(readFileSync(fixture('envelopes/v7-envelope.json'), 'utf8')));

    const envelope = parseContextEnvelope(JSON.stringify(capture.context_envelope));
    const now = capture.evaluation_time;
    const replayed = evaluate(loadPolicyFile(V7_POLICY), capture.intent, { now, contextNow: now, contextEnvelope: envelope });
    expect(replayed.verdict).toBe('block');
    expect(replayed.reasonCodes).toEqual(capture.reason_codes);
    expect(intentDigest(replayed.preparedIntent!)).toBe(capture.intent_digest);
  });

  it('the store ingests captures beside the traces as kind capture', () => {
    const state = join(dir, 'store');
    expect(ward(evalArgs(['--state-dir', state, '--capture-intents']), { cwd: dir }).code).toBe(3);
    expect(ward(['store', 'ingest', '--state-dir', state, '--json'], { cwd: dir }).code).toBe(0);
    const list = ward(['store', 'list', '--kind', 'capture', '--state-dir', state, '--json'], { cwd: dir });
    expect(list.code).toBe(0);
    const entries = (JSON.parse(list.stdout) as { entries: Record<string, unknown>[] }).entries;
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ kind: 'capture', verdict: 'block', tool_names: ['tool.write'], time: '2026-03-12T12:00:00Z' });
    const traces = ward(['store', 'list', '--kind', 'trace', '--state-dir', state, '--json'], { cwd: dir });
    expect((JSON.parse(traces.stdout) as { entries: unknown[] }).entries).toHaveLength(1);
  });
});

describe('parseDecisionCapture', () => {
  const good = {
    schema_id: 'ward.decision_capture',
    schema_version: '1.0.0',
    trace_id: 'a'.repeat(24),
    event_id: 'b'.repeat(24),
    evaluation_time: '2026-03-12T12:00:00Z',
    policy_digest: 'p',
    intent_digest: 'i',
    tool_name: 't',
    verdict: 'allow',
    reason_codes: [],
    matched_rule: '',
    intent: { tool_name: 't' },
  };
  it.each([
    ['wrong schema', { ...good, schema_id: 'gait.gate.trace' }, /schema_id/],
    ['bad event id', { ...good, event_id: 'xyz' }, /event_id/],
    ['bad time', { ...good, evaluation_time: 'yesterday' }, /evaluation_time/],
    ['reason codes not strings', { ...good, reason_codes: [1] }, /reason_codes/],
    ['neither intent nor error', { ...good, intent: undefined }, /intent or intent_error/],
  ])('refuses %s', (_name, value, message) => {
    expect(() => parseDecisionCapture(JSON.stringify(value))).toThrow(message);
  });
  it('refuses duplicate keys', () => {
    expect(() => parseDecisionCapture('{"schema_id":"ward.decision_capture","schema_id":"x"}')).toThrow(/decision capture/);
  });
});
