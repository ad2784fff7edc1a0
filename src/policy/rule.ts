import { goLower, goTrim, isSha256Hex, oneOfHint, uniqueSorted, uniqueSortedLower } from '../canon/index.js';
import {
  enumList,
  normalizeDataflow,
  normalizeDestructiveBudget,
  normalizeEndpoint,
  normalizeFreezeWindow,
  normalizeRateLimit,
  normalizeSandbox,
} from './constraints.js';
import { goQuote } from './go-quote.js';
import { invalidPolicy } from './invalid.js';
import { normalizeMatch } from './match.js';
import type { RawRule } from './schema.js';
import type { PolicyRule, Verdict } from './types.js';
import { CREDENTIAL_ACCESS_TYPES, CREDENTIAL_SOURCES, RULE_EFFECTS } from './vocabulary.js';

/** One rule (`gate.md` §2.3); validation runs in the reference's order, so the first error matches. */
export function normalizeRule(raw: RawRule): PolicyRule {
  const name = goTrim(raw.name);
  if (name === '') throw invalidPolicy('rule name is required');
  const effect = ruleEffect(raw, name);
  const match = normalizeMatch(raw.match, name);

  const manifestDigest = goLower(goTrim(raw.required_agent_manifest_digest));
  if (manifestDigest !== '' && !isSha256Hex(manifestDigest)) {
    throw invalidPolicy(`required_agent_manifest_digest must be sha256 hex for ${name}`);
  }
  const credentialSources = enumList(
    raw.allowed_credential_sources,
    CREDENTIAL_SOURCES,
    (q) => `unsupported allowed_credential_source ${q} for ${name}`,
  );
  const credentialAccessTypes = enumList(
    raw.allowed_credential_access_types,
    CREDENTIAL_ACCESS_TYPES,
    (q) => `unsupported allowed_credential_access_type ${q} for ${name}`,
  );
  if (raw.max_credential_ttl_seconds < 0) throw invalidPolicy(`max_credential_ttl_seconds must be >= 0 for ${name}`);
  if (raw.min_approvals < 0) throw invalidPolicy(`min_approvals must be >= 0 for ${name}`);
  const approvalBinding = goLower(goTrim(raw.approval_binding));
  if (approvalBinding !== '' && approvalBinding !== 'call' && approvalBinding !== 'session') {
    throw invalidPolicy(`approval_binding must be call or session for ${name}`);
  }

  let contextMode = goLower(goTrim(raw.required_context_evidence_mode));
  if (contextMode !== '' && contextMode !== 'required') {
    throw invalidPolicy(`required_context_evidence_mode must be required for ${name}`);
  }
  if (raw.require_context_evidence) contextMode = 'required';
  if (raw.max_context_age_seconds < 0) throw invalidPolicy(`max_context_age_seconds must be >= 0 for ${name}`);

  return {
    name,
    priority: raw.priority,
    effect,
    match,
    reason_codes: uniqueSorted(raw.reason_codes),
    violations: uniqueSorted(raw.violations),
    min_approvals: raw.min_approvals,
    // Several approvals by the same person would defeat the point of asking for several.
    require_distinct_approvers: raw.require_distinct_approvers || raw.min_approvals > 1,
    approval_binding: approvalBinding,
    require_context_evidence: raw.require_context_evidence,
    required_context_evidence_mode: contextMode,
    max_context_age_seconds: raw.max_context_age_seconds,
    require_declared_agent: raw.require_declared_agent,
    allowed_agent_ids: uniqueSorted(raw.allowed_agent_ids),
    denied_agent_ids: uniqueSorted(raw.denied_agent_ids),
    required_agent_manifest_digest: manifestDigest,
    allowed_agent_manifest_publishers: uniqueSortedLower(raw.allowed_agent_manifest_publishers),
    allowed_agent_manifest_sources: uniqueSortedLower(raw.allowed_agent_manifest_sources),
    required_agent_lifecycle_states: uniqueSortedLower(raw.required_agent_lifecycle_states),
    require_agent_owner: raw.require_agent_owner,
    require_unexpired_agent: raw.require_unexpired_agent,
    block_standing_credentials: raw.block_standing_credentials,
    allowed_credential_sources: credentialSources,
    allowed_credential_issuers: uniqueSorted(raw.allowed_credential_issuers),
    allowed_credential_access_types: credentialAccessTypes,
    max_credential_ttl_seconds: raw.max_credential_ttl_seconds,
    require_jit_credential: raw.require_jit_credential,
    require_broker_credential: raw.require_broker_credential,
    broker_reference: goTrim(raw.broker_reference),
    broker_scopes: uniqueSortedLower(raw.broker_scopes),
    freeze_window: normalizeFreezeWindow(raw.freeze_window, name),
    sandbox: normalizeSandbox(raw.sandbox, name),
    rate_limit: normalizeRateLimit(raw.rate_limit, name),
    destructive_budget: normalizeDestructiveBudget(raw.destructive_budget, name),
    dataflow: normalizeDataflow(raw.dataflow, name),
    endpoint: normalizeEndpoint(raw.endpoint, name),
  };
}

/** `effect`, or its alias `action`; when both are written they must agree. */
function ruleEffect(raw: RawRule, name: string): Verdict {
  const effect = goLower(goTrim(raw.effect));
  const action = goLower(goTrim(raw.action));
  if (effect !== '' && action !== '' && effect !== action) {
    throw invalidPolicy(`rule action must match effect for ${name}`);
  }
  const chosen = effect || action;
  if (chosen === '') throw invalidPolicy(`rule effect is required for ${name}`);
  if (!RULE_EFFECTS.has(chosen)) throw invalidPolicy(`invalid rule effect ${goQuote(chosen)} for ${name}`, oneOfHint(chosen, RULE_EFFECTS));
  return chosen as Verdict;
}

/** Does the rule constrain the declared agent (§3.3d)? Shared by the gate and `ward check`. */
export function hasAgentConstraint(rule: PolicyRule): boolean {
  return (
    rule.require_declared_agent ||
    rule.allowed_agent_ids.length > 0 ||
    rule.denied_agent_ids.length > 0 ||
    rule.required_agent_manifest_digest !== '' ||
    rule.allowed_agent_manifest_publishers.length > 0 ||
    rule.allowed_agent_manifest_sources.length > 0 ||
    rule.required_agent_lifecycle_states.length > 0 ||
    rule.require_agent_owner ||
    rule.require_unexpired_agent
  );
}

/** Does the rule constrain the credential posture (§3.3e)? */
export function hasCredentialConstraint(rule: PolicyRule): boolean {
  return (
    rule.block_standing_credentials ||
    rule.allowed_credential_sources.length > 0 ||
    rule.allowed_credential_issuers.length > 0 ||
    rule.allowed_credential_access_types.length > 0 ||
    rule.max_credential_ttl_seconds > 0 ||
    rule.require_jit_credential
  );
}
