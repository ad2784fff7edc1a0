import { describe, expect, it } from 'vitest';
import { nowUTC } from '../../src/canon/gotime.js';
import { generateSigningKey } from '../../src/keys/ed25519.js';
import { parsePolicyYaml } from '../../src/policy/load.js';
import { blockBeforePolicy } from '../../src/decision/pipeline.js';
import { verifyDigestedJson, withoutSignature } from '../../src/trace/sign.js';
import type { DecisionBasis } from '../../src/decision/types.js';
import { pathIntent } from './helpers.js';

const key = generateSigningKey();
const basis: DecisionBasis = { policy: parsePolicyYaml('default_verdict: allow\n'), signingKey: key, traceFormat: 'ward' };

const intent = pathIntent('fs.write', '/repo/a.txt', 'write', 'alice');

describe('blocks made before policy (the MCP proxy)', () => {
  it('a changed tool: block with mcp_tool_definition_changed, no rule, no latency, signed', () => {
    const r = blockBeforePolicy(basis, { kind: 'tool_changed', intent, inputs: { now: nowUTC() }, correlationId: 'c1' })!;
    expect(r.trace).toMatchObject({
      verdict: 'block',
      violations: ['mcp_tool_definition_changed'],
      reason_codes: ['mcp_tool_definition_changed'],
      matched_rule: '',
      correlation_id: 'c1',
      created_at: '2026-11-21T10:00:00Z',
      tool_name: 'fs.write',
    });
    expect(r.trace).not.toHaveProperty('latency_ms');
    expect(verifyDigestedJson(withoutSignature(r.trace), r.trace.signature, [key])).toMatchObject({ ok: true });
  });

  it('a changed tool whose intent cannot be prepared is left to the policy path', () => {
    // Not in canonical form: in a fail-closed risk class the policy path blocks it (and traces it).
    const failClosed = { ...basis, policy: parsePolicyYaml('default_verdict: allow\nfail_closed: { enabled: true }\n') };
    const broken = { ...intent, tool_name: '\uff46\uff53.write', context: { ...intent.context, risk_class: 'high' } };
    expect(blockBeforePolicy(failClosed, { kind: 'tool_changed', intent: broken, inputs: { now: nowUTC() }, correlationId: '' })).toBeUndefined();
  });

  it('a refused call: block with fail_closed_intent_invalid, traced by its stand-in subject', () => {
    const r = blockBeforePolicy(basis, { kind: 'refused', intent: { ...intent, args: { n: Infinity } }, createdAt: 'not a time', correlationId: 'c2' })!;
    expect(r.trace).toMatchObject({ verdict: 'block', violations: ['intent_not_evaluable'], reason_codes: ['fail_closed_intent_invalid'], tool_name: 'fs.write' });
    expect(r.subject.intent.tool_name).toBe('fs.write');
  });
});
