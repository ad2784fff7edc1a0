import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { digestJcs, loadKeyRing, parseContextEnvelope, verifyTracePath } from '../../src/index.js';
import { REPO, tempDir } from '../cli/run.js';

function runExample(script: string, stateDir: string) {
  const r = spawnSync(process.execPath, [join(REPO, 'examples', script)], { cwd: REPO, encoding: 'utf8', env: { ...process.env, WARD_STATE_DIR: stateDir } });
  return { code: r.status, lines: r.stdout.split('\n'), stderr: r.stderr };
}

describe('examples/contextos: ToolCallEnvelope -> Ward decision -> ToolResultEnvelope and DecisionRecord', () => {
  const stateDir = tempDir('ward-contextos-');
  let r: ReturnType<typeof runExample>;
  let records: Record<string, any>[];
  beforeAll(() => {
    r = runExample('contextos/gateway.mjs', stateDir);
    records = r.lines.filter((l) => l.startsWith('  DecisionRecord ')).map((l) => JSON.parse(l.slice('  DecisionRecord '.length)) as Record<string, any>);
  });

  it('decides each envelope: the read runs, the refund pauses for approval, the unknown capability is blocked', () => {
    expect(r.code, r.stderr).toBe(0);
    const verdicts = r.lines.filter((l) => /^tool_1\d\d /.test(l)).map((l) => l.replace(/\(trace [0-9a-f]+ verified\)$/, '').trim());
    expect(verdicts).toEqual([
      'tool_117 adp_orders.get_order: allow -> run the adapter',
      'tool_118 adp_payments.issue_refund: require_approval -> ToolResultEnvelope paused',
      'tool_119 adp_payments.void_invoice: block -> ToolResultEnvelope blocked',
    ]);
  });

  it('files one DecisionRecord per decision that agrees with the signed trace it points at', () => {
    const traces = verifyTracePath(join(stateDir, 'traces'), loadKeyRing(stateDir));
    expect(traces.summary).toEqual({ total: 3, verified: 3, failed: 0 });
    expect(records).toHaveLength(3);
    for (const record of records) {
      const result = traces.results.find((t) => t.trace_id === record['decision_id']);
      expect(result, record['decision_id']).toBeDefined();
      const trace = JSON.parse(readFileSync(result!.path, 'utf8')) as Record<string, any>;
      expect(record).toMatchObject({
        decision: trace['verdict'],
        capability_id: trace['tool_name'],
        intent_digest: trace['intent_digest'],
        policy_digest: trace['policy_digest'],
        signature: { key_id: trace['signature']['key_id'], signed_digest: trace['signature']['signed_digest'] },
        engine: 'ward',
      });
    }
    const refund = records.find((x) => x['tool_call_id'] === 'tool_118')!;
    // The upstream ContextOS decision is kept as a reference, never taken as an approval.
    expect(refund).toMatchObject({ upstream_policy_decision_id: 'pol_9901', decision: 'require_approval', result_status: 'paused', idempotency_key: 'ik_2x9k4j7m1q8w0p3z', principal: 'agent:contextos/support-refund@1.2.0', on_behalf_of: 'usr_771' });
    expect(refund['evidence_refs']).toEqual(['kg:order:ord_881#snapshot_kg_2026_05_03_T0930', 'policy:POLICY_RETURNS_V1#R_HIGH_VALUE_REQUIRES_APPROVAL']);
    expect(records.find((x) => x['tool_call_id'] === 'tool_119')).toMatchObject({ decision: 'block', result_status: 'blocked', reason_codes: ['default_block'], matched_rule: null });
  });
});

describe('examples/context-state: a typed context state as a context envelope', () => {
  let r: ReturnType<typeof runExample>;
  beforeAll(() => {
    r = runExample('context-state/agent.mjs', tempDir('ward-context-state-'));
  });

  it('allows the write with fresh state, blocks it stale or without state, and binds the state digest into the trace', () => {
    expect(r.code, r.stderr).toBe(0);
    const digest = r.lines.find((l) => l.startsWith('state digest: '))!.slice('state digest: '.length);
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(r.lines).toContain(`fresh state: allow (matched_rule_notes_with_fresh_state) context_set_digest ${digest}`);
    expect(r.lines).toContain(`stale state: block (context_freshness_exceeded, matched_rule_notes_with_fresh_state) context_set_digest ${digest}`);
    expect(r.lines.find((l) => l.startsWith('no state: block ('))).toContain('context_evidence_missing');
    const changed = r.lines.find((l) => l.startsWith('changed order amount -> state digest '))!.split(' ').pop();
    expect(changed).toMatch(/^[0-9a-f]{64}$/);
    expect(changed).not.toBe(digest);
    expect(r.lines).toContain('mistyped state refused: true');
    expect(r.lines).toContain('signed traces: 3/3 verified');
  });

  it('maps each slot to a record whose content digest is the JCS digest of its value', async () => {
    const { contextEnvelopeOf, SupportState } = (await import(join(REPO, 'examples/context-state/state.mjs'))) as {
      contextEnvelopeOf: (s: unknown, o: { contextSetId: string; createdAt: string }) => Record<string, any>;
      SupportState: { parse: (v: unknown) => any };
    };
    const state = SupportState.parse(JSON.parse(readFileSync(join(REPO, 'examples/context-state/state.json'), 'utf8')));
    const envelope = contextEnvelopeOf(state, { contextSetId: 'x', createdAt: '2026-05-03T09:30:05Z' });
    const order = envelope['records'].find((rec: { ref_id: string }) => rec.ref_id === 'state.order');
    expect(order).toMatchObject({ source_type: 'kg', immutability: 'immutable', redaction_mode: 'hashes', content_digest: digestJcs(state.slots.order.value) });
    // A record whose digest no longer matches the claimed set digest is refused by Ward's envelope parser.
    const sealed = parseContextEnvelope(JSON.stringify(envelope));
    const forged = { ...envelope, context_set_digest: sealed.context_set_digest, records: envelope['records'].map((rec: Record<string, unknown>) => (rec['ref_id'] === 'state.order' ? { ...rec, content_digest: 'f'.repeat(64) } : rec)) };
    expect(() => parseContextEnvelope(JSON.stringify(forged))).toThrow(/context_set_digest mismatch/);
  });
});
