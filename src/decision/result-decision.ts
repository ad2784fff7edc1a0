import type { JsonObject } from '../canon/index.js';
import { argsDigest, intentDigest } from '../intent/digest.js';
import { normalizeIntent } from '../intent/normalize.js';
import type { Verdict } from '../policy/types.js';
import type { SignedTrace } from '../trace/index.js';
import { assembleTrace } from './trace-assembler.js';
import type { DecisionBasis, DecisionSubject } from './types.js';

/**
 * The decision Ward made on a tool *result* (the result firewall of docs/witness.md): pass,
 * redact or block, signed like any decision by the one trace assembler and linked to the trace of
 * the call that produced the result (`relationship.parent_record_id`).
 *
 * Its subject is an intent that describes the result, not the call: same tool name and context as
 * the call, and as arguments only digests and detector names (`call_trace_id`, `result_digest`,
 * `delivered_digest`, `action`, `detectors`). It never holds the result's text, so neither the trace
 * nor a decision capture of it can carry the secret a detector found. Its intent digest differs from
 * the call's, so its trace id does too.
 */
export interface ResultDecisionInput {
  /** The raw intent request describing the result (see above); normalized here. */
  intent: JsonObject;
  verdict: Verdict;
  reasonCodes: readonly string[];
  violations: readonly string[];
  /** The trace of the call whose result this is. */
  callTraceId: string;
  correlationId: string;
}

export interface ResultDecision {
  trace: SignedTrace;
  subject: DecisionSubject;
}

export function signResultDecision(basis: DecisionBasis, input: ResultDecisionInput): ResultDecision {
  const intent = normalizeIntent(input.intent);
  const subject: DecisionSubject = { intent, intentDigest: intentDigest(intent), argsDigest: argsDigest(intent) };
  const trace = assembleTrace(basis, {
    subject,
    decision: { verdict: input.verdict, reasonCodes: input.reasonCodes, violations: input.violations },
    matchedRule: '',
    createdAt: intent.created_at,
    correlationId: input.correlationId,
    relationshipExtras: { parent_record_id: input.callTraceId },
  });
  return { trace, subject };
}
