import { compareUtf8, goLower, goTrim, oneOfHint, uniqueSortedLower } from '../canon/index.js';
import { invalidPolicy } from './invalid.js';
import { normalizeMcpTrust } from './mcp-trust.js';
import { normalizeRule } from './rule.js';
import { normalizeContext, normalizeResults } from './witness.js';
import type { RawPolicy } from './schema.js';
import type { NormalizedPolicy, PolicyRule, Verdict } from './types.js';
import {
  DEFAULT_HIGH_RISK_CLASSES,
  FAIL_CLOSED_HIGH_RISK_FIELDS,
  FAIL_CLOSED_REQUIRED_FIELDS,
  POLICY_SCHEMA_ID,
  POLICY_SCHEMA_VERSION,
  RULE_EFFECTS,
} from './vocabulary.js';

/**
 * The reference's `normalizePolicy` (`gate.md` §2.2–2.5): fills every default, normalizes every
 * list, validates, and sorts rules by (priority, name). The result is what gets evaluated and
 * digested, so nothing downstream needs to normalize again.
 */
export function normalizePolicy(raw: RawPolicy): NormalizedPolicy {
  const schemaId = goTrim(raw.schema_id) || POLICY_SCHEMA_ID;
  if (schemaId !== POLICY_SCHEMA_ID) throw invalidPolicy(`unsupported policy schema_id: ${schemaId}`);
  const schemaVersion = goTrim(raw.schema_version) || POLICY_SCHEMA_VERSION;
  if (schemaVersion !== POLICY_SCHEMA_VERSION) {
    throw invalidPolicy(`unsupported policy schema_version: ${schemaVersion}`);
  }
  const defaultVerdict = normalizeDefaultVerdict(raw);
  const failClosed = normalizeFailClosed(raw.fail_closed);
  const mcpTrust = normalizeMcpTrust(raw.mcp_trust);
  if (raw.scripts.max_steps < 0) throw invalidPolicy('scripts.max_steps must be >= 0');
  if (raw.scripts.require_approval_above < 0) throw invalidPolicy('scripts.require_approval_above must be >= 0');
  const results = normalizeResults(raw.results);
  const context = normalizeContext(raw.context);
  const rules = raw.rules.map(normalizeRule).sort(compareRules);
  return {
    schema_id: schemaId,
    schema_version: schemaVersion,
    default_verdict: defaultVerdict,
    scripts: {
      max_steps: raw.scripts.max_steps,
      require_approval_above: raw.scripts.require_approval_above,
      block_mixed_risk: raw.scripts.block_mixed_risk,
    },
    fail_closed: failClosed,
    mcp_trust: mcpTrust,
    results,
    context,
    rules,
  };
}

/** Evaluation order: lower priority first, then name byte-wise; ties keep file order. */
export function compareRules(a: PolicyRule, b: PolicyRule): number {
  if (a.priority !== b.priority) return a.priority < b.priority ? -1 : 1;
  return compareUtf8(a.name, b.name);
}

function normalizeDefaultVerdict(raw: RawPolicy): Verdict {
  const verdict = goLower(goTrim(raw.default_verdict));
  const alias = goLower(goTrim(raw.default_action));
  if (verdict !== '' && alias !== '' && verdict !== alias) {
    throw invalidPolicy('default_action must match default_verdict when both are set');
  }
  const chosen = verdict || alias || 'require_approval';
  if (!RULE_EFFECTS.has(chosen)) throw invalidPolicy(`invalid default_verdict: ${chosen}`, oneOfHint(chosen, RULE_EFFECTS));
  return chosen as Verdict;
}

function normalizeFailClosed(raw: RawPolicy['fail_closed']): NormalizedPolicy['fail_closed'] {
  const riskClasses = uniqueSortedLower(raw.risk_classes);
  const requiredFields = uniqueSortedLower(raw.required_fields);
  for (const field of requiredFields) {
    if (!FAIL_CLOSED_REQUIRED_FIELDS.has(field)) throw invalidPolicy(`unsupported fail_closed required_field: ${field}`);
  }
  const highRiskFields = uniqueSortedLower(raw.required_high_risk_fields);
  for (const field of highRiskFields) {
    if (!FAIL_CLOSED_HIGH_RISK_FIELDS.has(field)) {
      throw invalidPolicy(`unsupported fail_closed required_high_risk_field: ${field}`);
    }
  }
  return {
    enabled: raw.enabled,
    risk_classes: raw.enabled && riskClasses.length === 0 ? [...DEFAULT_HIGH_RISK_CLASSES] : riskClasses,
    required_fields: requiredFields,
    required_high_risk_fields: highRiskFields,
  };
}
