import type { GoTime, JsonObject } from '../canon/index.js';

/**
 * The normalized intent (`gate.md` §1). Field names are the contract's JSON names. Optional string
 * fields are normalized to "" and lists to [] so the evaluator never has to test for absence;
 * `digestPayload` applies Go's omitempty rules when a digest is built.
 */
export interface Target {
  kind: string;
  value: string;
  operation: string;
  sensitivity: string;
  endpoint_class: string;
  endpoint_domain: string;
  destructive: boolean;
  discovery_method: string;
  read_only_hint: boolean;
  destructive_hint: boolean;
  idempotent_hint: boolean;
  open_world_hint: boolean;
}

export interface ArgProvenance {
  arg_path: string;
  source: string;
  source_ref: string;
  integrity_digest: string;
}

export interface SkillProvenance {
  skill_name: string;
  skill_version: string;
  source: string;
  publisher: string;
  digest: string;
  signature_key_id: string;
}

export interface DelegationLink {
  delegator_identity: string;
  delegate_identity: string;
  scope_class: string;
  token_ref: string;
  issued_at: GoTime;
  expires_at: GoTime;
}

export interface Delegation {
  requester_identity: string;
  scope_class: string;
  token_refs: string[];
  issued_at: GoTime;
  expires_at: GoTime;
  chain: DelegationLink[];
}

export interface AgentIdentity {
  lifecycle_states: string[];
  owner: string;
  publisher: string;
  source: string;
  manifest_digest: string;
  issued_at: GoTime;
  approved_at: GoTime;
  expires_at: GoTime;
  revoked: boolean;
}

export interface SandboxContext {
  network_mode: string;
  env_exposure_mode: string;
  filesystem_isolation: string;
  user_mode: string;
  timeout_seconds: number;
  writable_paths: string[];
  read_only_roots: string[];
  evidence_ref: string;
  evidence_digest: string;
}

/** The context string fields that are trimmed with case kept. */
export const CONTEXT_PLAIN_STRING_FIELDS = [
  'agent_id',
  'run_id',
  'workflow_id',
  'repo',
  'environment',
  'job_id',
  'session_id',
  'request_id',
  'credential_ref',
  'credential_issuer',
  'credential_subject',
  'credential_owner',
  'credential_target_binding',
  'credential_run_binding',
  'credential_job_binding',
  'approval_ref',
  'wrkr_inventory_ref',
  'agent_action_bom_ref',
  'environment_fingerprint',
] as const;

export type ContextPlainStringField = (typeof CONTEXT_PLAIN_STRING_FIELDS)[number];

export type IntentContext = {
  identity: string;
  workspace: string;
  risk_class: string;
  phase: string;
  credential_source: string;
  credential_access_type: string;
  credential_ttl_seconds: number;
  credential_scopes: string[];
  agent_identity: AgentIdentity | undefined;
  sandbox: SandboxContext | undefined;
  /** Deep-normalized; undefined when absent or empty. */
  auth_context: JsonObject | undefined;
  context_set_digest: string;
  context_evidence_mode: string;
  context_refs: string[];
} & Record<ContextPlainStringField, string>;

export interface ScriptStep {
  tool_name: string;
  args: JsonObject;
  targets: Target[];
  arg_provenance: ArgProvenance[];
}

export interface NormalizedIntent {
  schema_id: string;
  schema_version: string;
  /** UTC; the zero time when the input had none. */
  created_at: GoTime;
  producer_version: string;
  tool_name: string;
  args: JsonObject;
  targets: Target[];
  arg_provenance: ArgProvenance[];
  skill_provenance: SkillProvenance | undefined;
  delegation: Delegation | undefined;
  context: IntentContext;
  script: { steps: ScriptStep[] } | undefined;
  /** "" for non-script intents. */
  script_hash: string;
  /** Normalized but never digested nor evaluated (kept for traces). */
  relationship: JsonObject | undefined;
  /** W3C Trace Context from `context.traceparent`/`tracestate` (Ward extension; never digested). */
  trace_context: TraceContext | undefined;
  /**
   * What the file system makes of the intent's paths, where the host can see it (Ward extension;
   * never digested, set by the host before evaluation). Absent: paths are read lexically.
   */
  path_view?: PathView | undefined;
}

/**
 * The file system's view of path targets, keyed by the path as spelled (absolute, `.` and `..`
 * kept: `spelledPath`): the paths the kernel reaches once symbolic links are resolved (from the
 * spelled and from the cleaned path: a tool may clean `..` as text first, or leave it to the
 * kernel), and other names of the same file under the roots a policy denies (hard links).
 * docs/canonical-targets.md "Links".
 */
export interface PathView {
  readonly paths: ReadonlyMap<string, ResolvedPath>;
  /** Denylist patterns (joined to the workspace) whose literal directories are reached through symbolic links → the pattern on the real directories. */
  readonly deniedPatterns: ReadonlyMap<string, string>;
}

export type ResolvedPath = { readonly names: readonly string[]; readonly problem?: undefined } | { readonly problem: string };

export interface TraceContext {
  traceparent: string;
  tracestate: string;
}
