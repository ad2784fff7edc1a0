export type {
  Verdict,
  PolicyMatch,
  ToolAnnotationsMatch,
  PolicyRule,
  FreezeWindowConfig,
  FreezeWindowEntry,
  SandboxConfig,
  RateLimitConfig,
  RateWindow,
  RateScope,
  DataflowConfig,
  EndpointConfig,
  McpTrustConfig,
  NormalizedPolicy,
  LoadedPolicy,
} from './types.js';
export { VERDICTS } from './types.js';
export type { RawPolicy, RawRule, RawMatch } from './schema.js';
export { parsePolicyYaml, loadPolicyFile } from './load.js';
export { normalizePolicy, compareRules } from './normalize.js';
export { policyDigestPayload, policyDigest } from './digest.js';
export { checkProfile, type PolicyProfile } from './profile.js';
export { formatPolicyYaml } from './format.js';
export { POLICY_SCHEMA_ID, POLICY_SCHEMA_VERSION } from './vocabulary.js';
