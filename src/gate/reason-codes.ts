/**
 * The registry of reason codes and violations (`gate.md` §3.7): public API. Every code Ward emits
 * is listed here or matches one of the families below; `docs/reason-codes.md` documents the same
 * set and a test keeps the two in step.
 */
export interface ReasonCodeInfo {
  /** The violation added with it ("" when the code adds none). */
  violation: string;
  /** Effect on the verdict. */
  effect: 'allow' | 'block' | 'require_approval' | 'dry_run' | 'none' | 'rule';
  meaning: string;
}

const r = (violation: string, effect: ReasonCodeInfo['effect'], meaning: string): ReasonCodeInfo => ({ violation, effect, meaning });

export const REASON_CODES: Readonly<Record<string, ReasonCodeInfo>> = {
  default_allow: r('', 'allow', 'no rule matched; the policy default is allow'),
  default_block: r('', 'block', 'no rule matched; the policy default is block'),
  default_dry_run: r('', 'dry_run', 'no rule matched; the policy default is dry_run'),
  default_require_approval: r('', 'require_approval', 'no rule matched; the policy default is require_approval'),
  fail_closed_intent_invalid: r('intent_not_evaluable', 'block', 'fail-closed risk class and the intent could not be normalized or bound; in the MCP proxy, any call it cannot evaluate (unevaluable arguments, a tool-call method in another spelling or sent as a notification)'),
  fail_closed_missing_targets: r('missing_targets', 'block', 'fail_closed.required_fields: targets, and there are none'),
  fail_closed_missing_arg_provenance: r('missing_arg_provenance', 'block', 'fail_closed.required_fields: arg_provenance, and there is none'),
  fail_closed_missing_endpoint_class: r('missing_endpoint_class', 'block', 'fail_closed.required_fields: endpoint_class, and a target class is empty or other'),
  fail_closed_missing_delegation: r('missing_delegation', 'block', 'fail_closed.required_fields: delegation, and there is none'),
  fail_closed_endpoint_class_unknown: r('endpoint_class_unknown', 'block', 'fail-closed evaluation with a target of class other'),
  context_evidence_missing: r('missing_context_evidence', 'block', 'context evidence required and no verified envelope was bound'),
  context_set_digest_missing: r('missing_context_evidence', 'block', 'a context rule applies and there is no verified context_set_digest'),
  context_evidence_mode_mismatch: r('context_evidence_mode_violation', 'block', 'the rule requires evidence mode required'),
  context_freshness_exceeded: r('context_freshness_violation', 'block', 'context older than max_context_age_seconds, or of unknown age'),
  kill_switch_state_unavailable: r('kill_switch_state_unavailable', 'block', 'kill-switch state required but unreadable'),
  kill_switch_active: r('kill_switch_active', 'block', 'an active kill-switch entry matched'),
  kill_switch_agent_id_active: r('kill_switch_active', 'block', 'kill switch matched the agent id'),
  kill_switch_identity_active: r('kill_switch_active', 'block', 'kill switch matched the identity'),
  kill_switch_tool_name_active: r('kill_switch_active', 'block', 'kill switch matched the tool name'),
  kill_switch_environment_active: r('kill_switch_active', 'block', 'kill switch matched the environment'),
  kill_switch_target_active: r('kill_switch_active', 'block', 'kill switch matched a target'),
  kill_switch_path_active: r('kill_switch_active', 'block', 'kill switch matched a path prefix'),
  kill_switch_workspace_active: r('kill_switch_active', 'block', 'kill switch matched a workspace prefix'),
  script_max_steps_exceeded: r('script_max_steps_exceeded', 'block', 'more script steps than scripts.max_steps'),
  script_step_threshold_approval: r('', 'require_approval', 'more script steps than scripts.require_approval_above'),
  script_mixed_risk_blocked: r('script_mixed_risk', 'block', 'script steps of different risk classes under block_mixed_risk'),
  plan_phase_non_destructive: r('', 'dry_run', 'destructive target in plan phase'),
  destructive_apply_requires_approval: r('', 'require_approval', 'destructive target in apply phase'),
  dataflow_tainted_destination: r('tainted_dataflow', 'rule', 'tainted provenance reaches a destination (configurable code)'),
  endpoint_path_denied: r('endpoint_path_denied', 'rule', 'a path target matches endpoint.path_denylist'),
  endpoint_path_not_allowlisted: r('endpoint_path_not_allowlisted', 'rule', 'a path target is outside endpoint.path_allowlist'),
  endpoint_domain_denied: r('endpoint_domain_denied', 'rule', 'a domain matches endpoint.domain_denylist'),
  endpoint_domain_not_allowlisted: r('endpoint_domain_not_allowlisted', 'rule', 'a domain is outside endpoint.domain_allowlist'),
  endpoint_target_not_canonical: r('endpoint_target_not_canonical', 'rule', 'a path or host list applies to a target that cannot be reduced to a canonical path or host (fails the list closed)'),
  endpoint_egress_class_not_allowed: r('endpoint_egress_class_not_allowed', 'rule', 'a network class outside endpoint.egress_classes'),
  endpoint_destructive_operation: r('destructive_operation', 'rule', 'endpoint.destructive_action and a destructive target'),
  endpoint_constraint_violation: r('endpoint_constraint_violation', 'none', 'added whenever the endpoint constraint triggers (configurable)'),
  agent_unknown: r('agent_identity_missing', 'block', 'undeclared agent (violation agent_not_declared for allowlist misses)'),
  agent_revoked: r('agent_revoked', 'block', 'agent denied or revoked'),
  agent_owner_missing: r('agent_owner_missing', 'block', 'require_agent_owner and no owner'),
  agent_lifecycle_state_invalid: r('agent_lifecycle_state_invalid', 'block', 'required lifecycle states missing'),
  agent_expired: r('agent_expired', 'block', 'agent identity expired at evaluation time'),
  agent_manifest_mismatch: r('agent_manifest_mismatch', 'block', 'manifest digest, publisher or source mismatch'),
  credential_evidence_missing: r('credential_evidence_missing', 'block', 'credential reference, access type or ttl missing'),
  credential_source_unknown: r('credential_source_unknown', 'block', 'no credential source'),
  credential_access_type_unknown: r('credential_access_type_unknown', 'block', 'no credential access type'),
  credential_not_jit: r('credential_not_jit', 'block', 'require_jit_credential and the credential is not jit'),
  standing_credential_disallowed: r('standing_credential_disallowed', 'block', 'block_standing_credentials and a standing credential'),
  credential_source_disallowed: r('credential_source_disallowed', 'block', 'source outside allowed_credential_sources'),
  credential_issuer_disallowed: r('credential_issuer_disallowed', 'block', 'issuer outside allowed_credential_issuers'),
  credential_access_type_disallowed: r('credential_access_type_disallowed', 'block', 'access type outside allowed_credential_access_types'),
  credential_ttl_exceeded: r('credential_ttl_exceeded', 'block', 'ttl above max_credential_ttl_seconds'),
  credential_target_binding_mismatch: r('credential_target_binding_mismatch', 'block', 'credential bound to other targets'),
  credential_run_binding_mismatch: r('credential_run_binding_mismatch', 'block', 'credential bound to another run'),
  credential_job_binding_mismatch: r('credential_job_binding_mismatch', 'block', 'credential bound to another job'),
  freeze_window_invalid_timezone: r('freeze_window_invalid_timezone', 'block', 'freeze window timezone cannot be loaded'),
  freeze_window_invalid_window: r('freeze_window_invalid_window', 'block', 'freeze window start/end unparsable or reversed'),
  freeze_window_active_block: r('freeze_window_active_block', 'block', 'inside an active freeze window'),
  freeze_window_active_require_approval: r('freeze_window_active_require_approval', 'require_approval', 'inside a freeze window with effect require_approval'),
  sandbox_metadata_missing: r('sandbox_metadata_missing', 'block', 'sandbox required and context.sandbox absent'),
  sandbox_evidence_missing: r('sandbox_evidence_missing', 'block', 'sandbox evidence ref or digest missing'),
  sandbox_network_mode_missing: r('sandbox_network_mode_missing', 'block', 'sandbox network mode missing'),
  sandbox_network_mode_disallowed: r('sandbox_network_mode_disallowed', 'block', 'sandbox network mode not allowed'),
  sandbox_env_exposure_mode_missing: r('sandbox_env_exposure_mode_missing', 'block', 'sandbox env exposure mode missing'),
  sandbox_env_exposure_mode_disallowed: r('sandbox_env_exposure_mode_disallowed', 'block', 'sandbox env exposure mode not allowed'),
  sandbox_timeout_missing: r('sandbox_timeout_missing', 'block', 'sandbox timeout missing'),
  sandbox_timeout_exceeded: r('sandbox_timeout_exceeded', 'block', 'sandbox timeout above the maximum'),
  sandbox_filesystem_isolation_missing: r('sandbox_filesystem_isolation_missing', 'block', 'filesystem isolation missing'),
  sandbox_filesystem_isolation_disallowed: r('sandbox_filesystem_isolation_disallowed', 'block', 'filesystem isolation not allowed'),
  sandbox_user_mode_missing: r('sandbox_user_mode_missing', 'block', 'sandbox user mode missing'),
  sandbox_user_mode_disallowed: r('sandbox_user_mode_disallowed', 'block', 'sandbox user mode not allowed'),
  sandbox_writable_path_disallowed: r('sandbox_writable_path_disallowed', 'block', 'writable path outside the allowed prefixes'),
  sandbox_read_only_root_missing: r('sandbox_read_only_root_missing', 'block', 'required read-only roots not all present'),
  rate_limit_exceeded: r('rate_limit_exceeded', 'block', 'rate limit reached'),
  destructive_budget_exceeded: r('destructive_budget_exceeded', 'block', 'destructive budget reached'),
  delegation_token_missing: r('delegation_not_granted', 'block', 'delegation required and no token given, or a hop of an incomplete chain left without a valid token'),
  delegation_chain_insufficient: r('delegation_not_granted', 'block', 'delegation chain incomplete'),
  delegation_token_invalid: r('', 'none', 'a delegation token failed normalization'),
  delegation_token_signature_missing: r('', 'none', 'a delegation token is unsigned'),
  delegation_token_signature_invalid: r('', 'none', 'a delegation token signature does not verify (or no key)'),
  delegation_token_expired: r('', 'none', 'a delegation token expired (wall clock)'),
  delegation_token_delegator_mismatch: r('', 'none', 'a delegation token names another delegator'),
  delegation_token_delegate_mismatch: r('', 'none', 'a delegation token names another delegate'),
  delegation_token_scope_mismatch: r('', 'none', 'a delegation token covers none of the required scopes'),
  delegation_token_intent_mismatch: r('', 'none', 'a delegation token is bound to another intent'),
  delegation_token_policy_mismatch: r('', 'none', 'a delegation token is bound to another policy'),
  delegation_token_chain_mismatch: r('', 'none', 'a delegation token matches no link of the chain'),
  delegation_granted: r('', 'none', 'delegation chain complete'),
  approval_token_missing: r('approval_not_granted', 'require_approval', 'approval required and no token given'),
  approval_token_invalid: r('', 'none', 'an approval token failed normalization'),
  approval_token_signature_missing: r('', 'none', 'an approval token is unsigned'),
  approval_token_signature_invalid: r('', 'none', 'an approval token signature does not verify (or no key)'),
  approval_token_expired: r('', 'none', 'an approval token expired (wall clock)'),
  approval_token_intent_mismatch: r('', 'none', 'an approval token is bound to another intent digest'),
  approval_token_policy_mismatch: r('', 'none', 'an approval token is bound to another policy digest'),
  approval_token_delegation_binding_mismatch: r('', 'none', 'an approval token is bound to another delegation chain'),
  approval_token_scope_mismatch: r('', 'none', 'an approval token does not cover every required scope'),
  approval_token_max_targets_exceeded: r('', 'none', 'more targets than the approval allows'),
  approval_token_max_ops_exceeded: r('', 'none', 'more operations than the approval allows'),
  approval_token_ttl_exceeded: r('', 'none', 'an approval token lives longer than 24h (expires_at - created_at, or expires_at - now)'),
  approval_token_consumed: r('', 'none', 'an approval token already granted a decision (one use; see the token ledger)'),
  approval_chain_insufficient: r('approval_not_granted', 'require_approval', 'fewer valid approvals than required'),
  approval_distinct_approvers_required: r('approval_not_granted', 'require_approval', 'too few distinct approvers'),
  approval_granted: r('', 'allow', 'approvals satisfied: require_approval becomes allow'),
  broker_credential_required: r('broker_credential_missing', 'block', 'a broker credential is required and no broker is configured'),
  broker_credential_missing: r('broker_credential_missing', 'block', 'the broker could not issue a credential'),
  broker_credential_present: r('', 'none', 'a broker credential was issued'),
  simulate_mode_non_enforcing: r('', 'allow', '--simulate: nothing is enforced'),
  simulated_block: r('', 'allow', '--simulate: the real verdict was block'),
  simulated_require_approval: r('', 'allow', '--simulate: the real verdict was require_approval'),
  approved_script_match: r('', 'allow', 'approved-script registry fast path'),
  mcp_trust_verified: r('', 'none', 'MCP trust: the server is in the trust snapshot and passes every check'),
  mcp_trust_identifier_missing: r('', 'rule', 'MCP trust: the call names no server_id or server_name (mcp_trust.action and mcp_trust_policy when enforced)'),
  mcp_trust_snapshot_unavailable: r('', 'rule', 'MCP trust: the trust snapshot cannot be read (mcp_trust.action when enforced)'),
  mcp_trust_snapshot_invalid: r('', 'rule', 'MCP trust: the trust snapshot does not parse or is invalid (mcp_trust.action when enforced)'),
  mcp_trust_server_unknown: r('', 'rule', 'MCP trust: the server is not in the snapshot (mcp_trust.action when enforced)'),
  mcp_trust_status_untrusted: r('', 'rule', 'MCP trust: snapshot status is not trusted/allow/pass (mcp_trust.action when enforced)'),
  mcp_trust_publisher_untrusted: r('', 'rule', 'MCP trust: publisher outside mcp_trust.publisher_allowlist (mcp_trust.action when enforced)'),
  mcp_trust_registry_unverified: r('', 'rule', 'MCP trust: require_registry and the registry signature/pin is unverified (mcp_trust.action when enforced)'),
  mcp_trust_stale: r('', 'rule', 'MCP trust: snapshot entry older than mcp_trust.max_age (mcp_trust.action when enforced)'),
  mcp_trust_below_threshold: r('', 'rule', 'MCP trust: score below mcp_trust.min_score (mcp_trust.action when enforced)'),
  mcp_tool_definition_changed: r('mcp_tool_definition_changed', 'block', 'MCP proxy with --pin-tools: the tool definition changed since it was pinned in this session; the call is not forwarded'),
  emergency_stop_preempted: r('emergency_stop_active', 'block', 'the call names a job (context.job_id) that is emergency-stopped'),
  emergency_stop_state_unavailable: r('emergency_stop_state_unavailable', 'block', 'the call names a job whose state cannot be read at --job-root'),
};

/** Code families whose names embed a policy value. */
export const REASON_CODE_FAMILIES: readonly { pattern: RegExp; meaning: string }[] = [
  { pattern: /^matched_rule_[^\s]+$/, meaning: 'a tier rule without reason_codes won (matched_rule_<sanitized name>)' },
  { pattern: /^fail_closed_missing_[a-z_]+$/, meaning: 'a fail_closed.required_high_risk_fields entry is missing' },
];

/** True for a code in the registry or one of its families (policy-defined codes are not listed). */
export function isRegisteredReasonCode(code: string): boolean {
  return code in REASON_CODES || REASON_CODE_FAMILIES.some((f) => f.pattern.test(code));
}

/** What a code means, from the registry or its family; undefined for codes a policy defines itself. */
export function describeReasonCode(code: string): string | undefined {
  return REASON_CODES[code]?.meaning ?? REASON_CODE_FAMILIES.find((f) => f.pattern.test(code))?.meaning;
}
