/**
 * The normalized policy (`gate.md` §2): every default filled, every list normalized and sorted,
 * rules sorted by (priority, name). Field names follow the YAML keys.
 */
export type Verdict = 'allow' | 'block' | 'dry_run' | 'require_approval';

export const VERDICTS: readonly Verdict[] = ['allow', 'block', 'dry_run', 'require_approval'];

export interface ToolAnnotationsMatch {
  read_only_hint: boolean | undefined;
  destructive_hint: boolean | undefined;
  idempotent_hint: boolean | undefined;
  open_world_hint: boolean | undefined;
}

export interface PolicyMatch {
  tool_names: string[];
  risk_classes: string[];
  identities: string[];
  workspace_prefixes: string[];
  target_kinds: string[];
  target_values: string[];
  endpoint_classes: string[];
  discovery_methods: string[];
  /** undefined when the policy set no hint at all. */
  tool_annotations: ToolAnnotationsMatch | undefined;
  skill_publishers: string[];
  skill_sources: string[];
  data_classes: string[];
  destination_kinds: string[];
  destination_values: string[];
  destination_operations: string[];
  provenance_sources: string[];
  context_tool_names: string[];
  context_data_classes: string[];
  context_endpoint_classes: string[];
  context_autonomy_levels: string[];
  require_delegation: boolean;
  allowed_delegator_identities: string[];
  allowed_delegate_identities: string[];
  delegation_scopes: string[];
  /** undefined when not set; 0 is a real limit. */
  max_delegation_depth: number | undefined;
}

export interface FreezeWindowEntry {
  name: string;
  /** Local wall time `YYYY-MM-DDTHH:MM:SS` in `timezone`. */
  start: string;
  end: string;
}

export interface FreezeWindowConfig {
  enabled: boolean;
  timezone: string;
  effect: Verdict;
  reason: string;
  environments: string[];
  risk_classes: string[];
  windows: FreezeWindowEntry[];
}

export interface SandboxConfig {
  enabled: boolean;
  allowed_network_modes: string[];
  /** null when empty (the reference digests these as null, not []). */
  allowed_writable_path_prefixes: string[] | null;
  required_read_only_roots: string[] | null;
  allowed_env_exposure_modes: string[];
  max_timeout_seconds: number;
  allowed_filesystem_isolations: string[];
  allowed_user_modes: string[];
}

export type RateWindow = 'minute' | 'hour';
export type RateScope = 'tool' | 'identity' | 'tool_identity';

export interface RateLimitConfig {
  /** 0 means disabled. */
  requests: number;
  window: RateWindow;
  scope: RateScope;
}

export interface DataflowConfig {
  enabled: boolean;
  tainted_sources: string[];
  destination_kinds: string[];
  destination_values: string[];
  destination_operations: string[];
  action: Verdict;
  reason_code: string;
  violation: string;
}

export interface EndpointConfig {
  enabled: boolean;
  path_allowlist: string[];
  path_denylist: string[];
  domain_allowlist: string[];
  domain_denylist: string[];
  egress_classes: string[];
  action: Verdict;
  /** "" when not set. */
  destructive_action: Verdict | '';
  reason_code: string;
  violation: string;
}

export interface PolicyRule {
  name: string;
  priority: number;
  effect: Verdict;
  match: PolicyMatch;
  reason_codes: string[];
  violations: string[];
  min_approvals: number;
  require_distinct_approvers: boolean;
  /**
   * Ward extension: what an approval given for this rule binds. "" or `call` (the default): the
   * call — tool, arguments, targets, context without the run, session and request ids — so the
   * same call from a new session is granted; `session`: the exact intent, session included.
   */
  approval_binding: '' | 'call' | 'session';
  require_context_evidence: boolean;
  /** "" or "required". */
  required_context_evidence_mode: string;
  max_context_age_seconds: number;
  require_declared_agent: boolean;
  allowed_agent_ids: string[];
  denied_agent_ids: string[];
  required_agent_manifest_digest: string;
  allowed_agent_manifest_publishers: string[];
  allowed_agent_manifest_sources: string[];
  required_agent_lifecycle_states: string[];
  require_agent_owner: boolean;
  require_unexpired_agent: boolean;
  block_standing_credentials: boolean;
  allowed_credential_sources: string[];
  allowed_credential_issuers: string[];
  allowed_credential_access_types: string[];
  max_credential_ttl_seconds: number;
  require_jit_credential: boolean;
  require_broker_credential: boolean;
  broker_reference: string;
  broker_scopes: string[];
  freeze_window: FreezeWindowConfig;
  sandbox: SandboxConfig;
  rate_limit: RateLimitConfig;
  destructive_budget: RateLimitConfig;
  dataflow: DataflowConfig;
  endpoint: EndpointConfig;
}

export interface McpTrustConfig {
  enabled: boolean;
  snapshot: string;
  action: 'block' | 'require_approval';
  required_risk_classes: string[];
  min_score: number;
  /** Canonical Go duration text (e.g. `24h0m0s`), "" when unset. */
  max_age: string;
  /** max_age in seconds, 0 when unset. */
  max_age_seconds: number;
  publisher_allowlist: string[];
  require_registry: boolean;
}

/** What the MCP proxy does with a tool result a detector flagged (docs/witness.md). */
export type ResultAction = 'pass' | 'redact' | 'block';

export interface ResultDetectorConfig {
  /** On when the policy sets the detector's `action`. */
  enabled: boolean;
  action: ResultAction;
}

export interface PiiPattern {
  /** `[a-z0-9_]{1,64}`: names the finding and the redaction marker. */
  name: string;
  /** JavaScript regular expression source, compiled with the `u` flag. */
  regex: string;
}

/** The result firewall (`results:`), a Ward extension: absent from Gait policies, off by default. */
export interface ResultsConfig {
  /** Any detector on. */
  enabled: boolean;
  credentials: ResultDetectorConfig;
  invisible: ResultDetectorConfig;
  /** Sorted by name. */
  pii: ResultDetectorConfig & { patterns: PiiPattern[] };
  /** 0 when off. */
  oversize: ResultDetectorConfig & { max_bytes: number };
}

/** Witnessed context (`context:`), a Ward extension: which tools' results are retrieval. */
export interface ContextConfig {
  enabled: boolean;
  /** Lowercased tool names, sorted, as rule `tool_names` are. */
  retrieval_tools: string[];
}

export interface NormalizedPolicy {
  schema_id: string;
  schema_version: string;
  default_verdict: Verdict;
  scripts: { max_steps: number; require_approval_above: number; block_mixed_risk: boolean };
  fail_closed: {
    enabled: boolean;
    risk_classes: string[];
    required_fields: string[];
    required_high_risk_fields: string[];
  };
  mcp_trust: McpTrustConfig;
  results: ResultsConfig;
  context: ContextConfig;
  /** Sorted by (priority ascending, name ascending byte-wise). */
  rules: PolicyRule[];
}

/** A policy ready to evaluate: normalized once, digested once. */
export interface LoadedPolicy {
  policy: NormalizedPolicy;
  /** sha256(JCS(PascalCase payload)), `gate.md` §2.6. */
  digest: string;
}
