// A ContextOS DecisionRecord from Ward's signed trace of the decision and the envelope it decided.
// Every member names its source, so ContextOS can file the record and anyone can check it against
// the trace: the trace is the evidence, the record an index entry pointing at it.

const STATUS = { allow: 'ok', require_approval: 'paused', block: 'blocked', dry_run: 'blocked' };

/**
 * @param envelope the ContextOS `ToolCallEnvelope` (`contextos.tool_call.v1`) the gateway received
 * @param trace    Ward's trace record for it (`gait.gate.trace`, verified by the caller)
 */
export function decisionRecord(envelope, trace) {
  const relationship = trace.relationship ?? {};
  return {
    // The decision: Ward's trace id is the record's id; ContextOS's own id for it, if any, came in
    // as `policy_decision_id` and is kept as the upstream reference, never as an approval.
    decision_id: trace.trace_id,
    upstream_policy_decision_id: envelope.policy_decision_id ?? null,
    engine: 'ward',
    decision: trace.verdict,
    result_status: STATUS[trace.verdict] ?? 'blocked',
    reason_codes: trace.reason_codes ?? [],
    matched_rule: trace.matched_rule || null,
    // What was decided: the call, bound by digests Ward computed from the envelope.
    tool_call_id: envelope.tool_call_id,
    capability_id: trace.tool_name,
    run_id: trace.run_id ?? envelope.run_id,
    session_id: relationship.parent_ref?.kind === 'session' ? relationship.parent_ref.id : envelope.session_id,
    trace_id: envelope.trace_id,
    intent_digest: trace.intent_digest,
    args_digest: trace.args_digest,
    policy_digest: trace.policy_digest,
    evidence_refs: relationship.evidence_refs ?? [],
    idempotency_key: relationship.idempotency_key ?? null,
    // Who: the acting agent, and the principal it acts for (from principal_chain).
    principal: (envelope.principal_chain ?? []).find((p) => p.kind === 'agent')?.id ?? null,
    on_behalf_of: (envelope.principal_chain ?? [])[0]?.id ?? null,
    // Proof: the signature that makes the trace, and so this record, checkable offline.
    signature: { alg: trace.signature.alg, key_id: trace.signature.key_id, signed_digest: trace.signature.signed_digest },
  };
}
