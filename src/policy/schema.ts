/**
 * The policy YAML shape, as the reference's Go structs define it (`gate.md` §2.2–2.4): every key
 * that exists and the type it decodes to. It is the single source of truth for the strict decoder
 * (unknown keys, type errors) and for the `Raw*` types that `normalizePolicy` reads.
 */
export type FieldSpec =
  | { readonly kind: 'string' }
  | { readonly kind: 'int' }
  | { readonly kind: 'float' }
  | { readonly kind: 'bool' }
  /** A Go pointer field: absent (or null) stays undefined, so 0 / false are real values. */
  | { readonly kind: 'optional_int' }
  | { readonly kind: 'optional_bool' }
  | { readonly kind: 'string_list' }
  | ObjectSpec
  | { readonly kind: 'object_list'; readonly item: ObjectSpec };

export interface ObjectSpec {
  readonly kind: 'object';
  readonly fields: Readonly<Record<string, FieldSpec>>;
}

/** The decoded value of a spec: Go zero values for anything absent. */
export type Decoded<S> = S extends { kind: 'string' }
  ? string
  : S extends { kind: 'int' | 'float' }
    ? number
    : S extends { kind: 'bool' }
      ? boolean
      : S extends { kind: 'optional_int' }
        ? number | undefined
        : S extends { kind: 'optional_bool' }
          ? boolean | undefined
          : S extends { kind: 'string_list' }
            ? string[]
            : S extends { kind: 'object_list'; item: infer I }
              ? Decoded<I>[]
              : S extends { kind: 'object'; fields: infer F }
                ? { -readonly [K in keyof F]: Decoded<F[K]> }
                : never;

const str = { kind: 'string' } as const;
const int = { kind: 'int' } as const;
const float = { kind: 'float' } as const;
const bool = { kind: 'bool' } as const;
const optionalInt = { kind: 'optional_int' } as const;
const optionalBool = { kind: 'optional_bool' } as const;
const list = { kind: 'string_list' } as const;
function obj<const F extends Record<string, FieldSpec>>(fields: F): { readonly kind: 'object'; readonly fields: F } {
  return { kind: 'object', fields };
}
function objList<const I extends ObjectSpec>(item: I): { readonly kind: 'object_list'; readonly item: I } {
  return { kind: 'object_list', item };
}

const RATE_LIMIT = obj({ requests: int, window: str, scope: str });

export const MATCH_SPEC = obj({
  tool_name: str,
  tool_names: list,
  risk_classes: list,
  identities: list,
  workspace_prefixes: list,
  target_kinds: list,
  target_values: list,
  endpoint_class: list,
  endpoint_classes: list,
  discovery_method: list,
  tool_annotations: obj({
    readOnlyHint: optionalBool,
    destructiveHint: optionalBool,
    idempotentHint: optionalBool,
    openWorldHint: optionalBool,
  }),
  skill_publishers: list,
  skill_sources: list,
  data_classes: list,
  destination_kinds: list,
  destination_values: list,
  destination_operations: list,
  provenance_sources: list,
  context_tool_names: list,
  context_data_classes: list,
  context_endpoint_classes: list,
  context_autonomy_levels: list,
  require_delegation: bool,
  allowed_delegator_identities: list,
  allowed_delegate_identities: list,
  delegation_scopes: list,
  max_delegation_depth: optionalInt,
});

export const RULE_SPEC = obj({
  name: str,
  priority: int,
  effect: str,
  action: str,
  match: MATCH_SPEC,
  reason_codes: list,
  violations: list,
  min_approvals: int,
  require_distinct_approvers: bool,
  approval_binding: str,
  require_context_evidence: bool,
  required_context_evidence_mode: str,
  max_context_age_seconds: int,
  require_declared_agent: bool,
  allowed_agent_ids: list,
  denied_agent_ids: list,
  required_agent_manifest_digest: str,
  allowed_agent_manifest_publishers: list,
  allowed_agent_manifest_sources: list,
  required_agent_lifecycle_states: list,
  require_agent_owner: bool,
  require_unexpired_agent: bool,
  block_standing_credentials: bool,
  allowed_credential_sources: list,
  allowed_credential_issuers: list,
  allowed_credential_access_types: list,
  max_credential_ttl_seconds: int,
  require_jit_credential: bool,
  require_broker_credential: bool,
  broker_reference: str,
  broker_scopes: list,
  freeze_window: obj({
    enabled: bool,
    timezone: str,
    effect: str,
    reason: str,
    environments: list,
    risk_classes: list,
    windows: objList(obj({ name: str, start: str, end: str })),
  }),
  sandbox: obj({
    enabled: bool,
    allowed_network_modes: list,
    allowed_writable_path_prefixes: list,
    required_read_only_roots: list,
    allowed_env_exposure_modes: list,
    max_timeout_seconds: int,
    allowed_filesystem_isolations: list,
    allowed_user_modes: list,
  }),
  rate_limit: RATE_LIMIT,
  destructive_budget: RATE_LIMIT,
  dataflow: obj({
    enabled: bool,
    tainted_sources: list,
    destination_kinds: list,
    destination_values: list,
    destination_operations: list,
    action: str,
    reason_code: str,
    violation: str,
  }),
  endpoint: obj({
    enabled: bool,
    path_allowlist: list,
    path_denylist: list,
    domain_allowlist: list,
    domain_denylist: list,
    egress_classes: list,
    action: str,
    destructive_action: str,
    reason_code: str,
    violation: str,
  }),
});

export const POLICY_SPEC = obj({
  schema_id: str,
  schema_version: str,
  default_verdict: str,
  default_action: str,
  scripts: obj({ max_steps: int, require_approval_above: int, block_mixed_risk: bool }),
  fail_closed: obj({ enabled: bool, risk_classes: list, required_fields: list, required_high_risk_fields: list }),
  mcp_trust: obj({
    enabled: bool,
    snapshot: str,
    action: str,
    required_risk_classes: list,
    min_score: float,
    max_age: str,
    publisher_allowlist: list,
    require_registry: bool,
  }),
  results: obj({
    credentials: obj({ action: str }),
    invisible: obj({ action: str }),
    pii: obj({ action: str, patterns: objList(obj({ name: str, regex: str })) }),
    oversize: obj({ action: str, max_bytes: int }),
  }),
  context: obj({ retrieval_tools: list }),
  rules: objList(RULE_SPEC),
});

/** A policy exactly as written (after strict YAML decoding), before defaults and validation. */
export type RawPolicy = Decoded<typeof POLICY_SPEC>;
export type RawRule = Decoded<typeof RULE_SPEC>;
export type RawMatch = Decoded<typeof MATCH_SPEC>;
export type RawRateLimit = RawRule['rate_limit'];
export type RawResults = RawPolicy['results'];
export type RawContext = RawPolicy['context'];

/** The zero value of a spec (Go's zero struct), used for absent and `null` nodes. */
export function zeroValue<S extends FieldSpec>(spec: S): Decoded<S> {
  return zeroOf(spec) as Decoded<S>;
}

function zeroOf(spec: FieldSpec): unknown {
  switch (spec.kind) {
    case 'string':
      return '';
    case 'int':
    case 'float':
      return 0;
    case 'bool':
      return false;
    case 'optional_int':
    case 'optional_bool':
      return undefined;
    case 'string_list':
    case 'object_list':
      return [];
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, field] of Object.entries(spec.fields)) out[key] = zeroOf(field);
      return out;
    }
  }
}
