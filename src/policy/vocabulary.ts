import type { Verdict } from './types.js';

/** The closed value sets a policy is validated against (`gate.md` §1.2, §2.2–2.4). */
export {
  ENDPOINT_CLASSES,
  DISCOVERY_METHODS,
  CREDENTIAL_SOURCES,
  CREDENTIAL_ACCESS_TYPES,
  SANDBOX_NETWORK_MODES,
  SANDBOX_ENV_EXPOSURE_MODES,
  SANDBOX_FILESYSTEM_ISOLATIONS,
  SANDBOX_USER_MODES,
} from '../contract/vocabulary.js';

export const POLICY_SCHEMA_ID = 'gait.gate.policy';
export const POLICY_SCHEMA_VERSION = '1.0.0';

export const RULE_EFFECTS: ReadonlySet<string> = new Set<Verdict>(['allow', 'block', 'dry_run', 'require_approval']);

/** Constraint actions (endpoint, dataflow, freeze window, mcp_trust) can only restrict. */
export const RESTRICTING_ACTIONS: ReadonlySet<string> = new Set<Verdict>(['block', 'require_approval']);

export const FAIL_CLOSED_REQUIRED_FIELDS: ReadonlySet<string> = new Set([
  'targets',
  'arg_provenance',
  'endpoint_class',
  'delegation',
  'context_evidence',
]);

export const FAIL_CLOSED_HIGH_RISK_FIELDS: ReadonlySet<string> = new Set([
  'agent_id',
  'agent_identity',
  'run_id',
  'workflow_id',
  'repo',
  'environment',
  'credential_ref',
  'credential_source',
  'credential_access_type',
  'credential_issuer',
  'credential_ttl_seconds',
  'approval_ref',
  'wrkr_inventory_ref',
  'agent_action_bom_ref',
]);

export const RATE_WINDOWS: ReadonlySet<string> = new Set(['minute', 'hour']);
export const RATE_SCOPES: ReadonlySet<string> = new Set(['tool', 'identity', 'tool_identity']);

/** Risk classes that fail_closed and mcp_trust cover when enabled without a list. */
export const DEFAULT_HIGH_RISK_CLASSES: readonly string[] = ['critical', 'high'];

export const DEFAULT_TAINTED_SOURCES: readonly string[] = ['external', 'tool_output'];
