import { formatRFC3339Nano, nowUTC, type JsonObject, type JsonValue } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { INTENT_SCHEMA_ID, INTENT_SCHEMA_VERSION, normalizeIntent } from '../intent/normalize.js';
import { WARD_VERSION } from '../version.js';

/**
 * The intent request a caller sends to the gate (`gate.md` §1, `gait.gate.intent_request` 1.0.0),
 * typed for the fields people set by hand. Everything else in §1.2 is accepted through the index
 * signatures and normalized by the gate exactly as from JSON.
 */
export type TargetKind = 'path' | 'url' | 'host' | 'repo' | 'bucket' | 'table' | 'queue' | 'topic' | 'other';

export type EndpointClass =
  | 'fs.read'
  | 'fs.write'
  | 'fs.delete'
  | 'proc.exec'
  | 'net.http'
  | 'net.dns'
  | 'ui.click'
  | 'ui.type'
  | 'ui.navigate'
  | 'other';

export type ProvenanceSource = 'user' | 'tool_output' | 'external' | 'system';

export interface IntentTarget {
  kind: TargetKind;
  value: string;
  /** e.g. read, write, delete, exec; infers `endpoint_class` when that is not given (§1.4). */
  operation?: string;
  /** What `match.data_classes` compares against. */
  sensitivity?: string;
  endpoint_class?: EndpointClass;
  endpoint_domain?: string;
  destructive?: boolean;
  discovery_method?: string;
  read_only_hint?: boolean;
  destructive_hint?: boolean;
  idempotent_hint?: boolean;
  open_world_hint?: boolean;
}

export interface IntentArgProvenance {
  /** e.g. `$.path`. */
  arg_path: string;
  source: ProvenanceSource;
  source_ref?: string;
  integrity_digest?: string;
}

export interface IntentContext {
  identity: string;
  workspace: string;
  /** Free-form; `high` and `critical` have special meaning (fail-closed checks). */
  risk_class: string;
  phase?: 'plan' | 'apply';
  agent_id?: string;
  run_id?: string;
  session_id?: string;
  environment?: string;
  auth_context?: JsonObject;
  [field: string]: unknown;
}

export interface IntentRequest {
  schema_id: string;
  schema_version: string;
  created_at: string;
  producer_version: string;
  tool_name: string;
  args: JsonObject;
  targets: IntentTarget[];
  arg_provenance?: IntentArgProvenance[];
  context: IntentContext;
  [field: string]: unknown;
}

/** The plain-function form: what a caller must say; the envelope fields are filled in. */
export interface IntentSpec {
  tool_name: string;
  args?: JsonObject;
  targets?: IntentTarget[];
  arg_provenance?: IntentArgProvenance[];
  context: IntentContext;
  /** RFC 3339; defaults to now. */
  created_at?: string;
  producer_version?: string;
  /** Any other §1.2 field (`skill_provenance`, `delegation`, `script`, ...), passed through. */
  extra?: JsonObject;
}

/** Build an intent request and check that the gate can normalize it (throws `WardError`). */
function buildRequest(spec: IntentSpec): IntentRequest {
  const request: IntentRequest = {
    ...(spec.extra ?? {}),
    schema_id: INTENT_SCHEMA_ID,
    schema_version: INTENT_SCHEMA_VERSION,
    created_at: spec.created_at ?? formatRFC3339Nano(nowUTC()),
    producer_version: spec.producer_version ?? `ward-sdk/${WARD_VERSION}`,
    tool_name: spec.tool_name,
    args: spec.args ?? {},
    targets: spec.targets ?? [],
    context: spec.context,
  };
  if (spec.arg_provenance?.length) request.arg_provenance = spec.arg_provenance;
  validate(request);
  return request;
}

function validate(request: IntentRequest): void {
  const missing = (['identity', 'workspace', 'risk_class'] as const).filter((f) => !String(request.context?.[f] ?? '').trim());
  if (missing.length) {
    throw new WardError(ERROR_CODES.INTENT_INVALID, `intent context is missing ${missing.join(', ')}`, {
      hint: "set them with .context({ identity: 'agent.name', workspace: '/repo', risk_class: 'high' })",
    });
  }
  // The gate's own normalization: a builder never hands out an intent the gate would reject.
  normalizeIntent(request);
}

/** A fluent builder: `intent.tool('fs.write').args({...}).target({...}).context({...}).build()`. */
export class IntentBuilder {
  readonly #spec: IntentSpec;

  constructor(toolName: string) {
    this.#spec = { tool_name: toolName, context: { identity: '', workspace: '', risk_class: '' } };
  }

  args(args: JsonObject): this {
    this.#spec.args = { ...(this.#spec.args ?? {}), ...args };
    return this;
  }

  /** Add one target (call once per target). */
  target(target: IntentTarget): this {
    this.#spec.targets = [...(this.#spec.targets ?? []), target];
    return this;
  }

  /** Record where an argument came from: `provenance('$.path', 'user')`. */
  provenance(argPath: string, source: ProvenanceSource, sourceRef?: string): this {
    const entry: IntentArgProvenance = { arg_path: argPath, source, ...(sourceRef ? { source_ref: sourceRef } : {}) };
    this.#spec.arg_provenance = [...(this.#spec.arg_provenance ?? []), entry];
    return this;
  }

  /** Merge context fields (identity, workspace and risk_class are required by `build()`). */
  context(context: Partial<IntentContext>): this {
    this.#spec.context = { ...this.#spec.context, ...(context as IntentContext) };
    return this;
  }

  createdAt(rfc3339: string): this {
    this.#spec.created_at = rfc3339;
    return this;
  }

  /** Any other §1.2 field, e.g. `.with('skill_provenance', {...})`. */
  with(field: string, value: JsonValue): this {
    this.#spec.extra = { ...(this.#spec.extra ?? {}), [field]: value };
    return this;
  }

  build(): IntentRequest {
    return buildRequest(this.#spec);
  }
}

/**
 * Intent builders. `intent({ tool_name, args, targets, context })` is the plain form;
 * `intent.tool(name)` starts a fluent builder. Both validate with the gate's normalization.
 */
export const intent: ((spec: IntentSpec) => IntentRequest) & { tool: (toolName: string) => IntentBuilder } = Object.assign(
  (spec: IntentSpec): IntentRequest => buildRequest(spec),
  { tool: (toolName: string): IntentBuilder => new IntentBuilder(toolName) },
);
