import { describe, expect, it } from 'vitest';
import { jcs, parseRFC3339 } from '../../src/canon/index.js';
import { buildTraceRecord, eventIdFor, signTrace, traceIdFor } from '../../src/trace/index.js';
import { contextPayload } from '../../src/intent/digest.js';
import { normalizeIntent } from '../../src/intent/normalize.js';
import { V7_INTENT_DIGEST, V7_POLICY_DIGEST, V7_TRACE_TEXT, v7SigningKey, v7TraceInput } from './fixtures.js';

describe('trace record (V7 golden)', () => {
  it('derives trace_id and event_id exactly as the reference does', () => {
    expect(traceIdFor(V7_POLICY_DIGEST, V7_INTENT_DIGEST, 'block')).toBe('98c069640be42974e73b8b6b');
    expect(eventIdFor('98c069640be42974e73b8b6b', parseRFC3339('2026-11-21T21:11:28.455778037Z'))).toBe(
      '5db2362d8eb9b75a9265737a',
    );
  });

  it('rebuilds the V7 reference trace byte for byte in gait format, signature included', () => {
    const signed = signTrace(buildTraceRecord(v7TraceInput(), 'gait'), v7SigningKey());
    expect(signed.signature.signed_digest).toBe('f831a095c92c132b02f706164393b7c87f870bb548f5619c9ecf341873713e03');
    expect(signed.signature.sig).toBe(
      'zoA53VOSgtzfjvgnWq9G4rm5vBWAM8i/djnGbcd34/1y3DQmbtYePaB5g5TeoyTP/N5f9jxRp1k5Fq2TjcqZDA==',
    );
    expect(JSON.stringify(signed)).toBe(V7_TRACE_TEXT.trim());
  });

  it('adds reason_codes and matched_rule inside the signature in ward format', () => {
    const unsigned = buildTraceRecord(v7TraceInput(), 'ward');
    expect(unsigned['reason_codes']).toEqual(['context_freshness_exceeded', 'matched_rule_allow_with_context_proof']);
    expect(unsigned['matched_rule']).toBe('allow-with-context-proof');
    const signed = signTrace(unsigned, v7SigningKey());
    expect(signed.signature.signed_digest).not.toBe('f831a095c92c132b02f706164393b7c87f870bb548f5619c9ecf341873713e03');
    expect(jcs(signed)).toContain('"matched_rule":"allow-with-context-proof"');
  });

  it('copies context members exactly as contextPayload renders them, and only the set ones', () => {
    const copied = [
      'agent_id', 'agent_identity', 'run_id', 'workflow_id', 'repo', 'environment', 'credential_ref', 'credential_source',
      'credential_access_type', 'credential_issuer', 'credential_subject', 'credential_owner', 'credential_target_binding',
      'credential_run_binding', 'credential_job_binding', 'credential_ttl_seconds', 'approval_ref', 'wrkr_inventory_ref',
      'agent_action_bom_ref',
    ];
    const full: Record<string, unknown> = { identity: 'alice', workspace: '/w', risk_class: 'high', credential_ttl_seconds: 60, credential_source: 'aws_sts', credential_access_type: 'jit' };
    for (const f of copied) if (!(f in full) && f !== 'agent_identity') full[f] = `${f}-value`;
    full['agent_identity'] = { owner: 'team', lifecycle_states: ['approved'], issued_at: '2026-01-01T00:00:00Z', revoked: true };
    for (const context of [full, { identity: 'alice', workspace: '/w', risk_class: 'high' }]) {
      const intent = normalizeIntent({ tool_name: 'tool.read', context });
      const record = buildTraceRecord({ ...v7TraceInput(), intent }, 'ward');
      const payload = contextPayload(intent.context);
      for (const f of copied) expect(record[f], f).toEqual(payload[f]);
    }
  });
});
