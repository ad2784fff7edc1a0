import { decodeBool, decodeObject, decodeObjectArray, decodeString, decodeStringArray, isJsonObject, parseJsonText, plainFaultMessage, type FaultReporter, type JsonObject, type JsonValue } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';

/**
 * The reference's internal `ToolCall` (`mcp-decision-service.md` §6.1): what every payload adapter
 * decodes into, and what becomes the intent (§6.2). Field names follow the `mcp` adapter's JSON.
 */
export interface ToolCall {
  name: string;
  args: JsonObject;
  script: { steps: ScriptStepCall[] } | undefined;
  /** Legacy single `target` string. */
  target: string;
  targets: CallTarget[];
  argProvenance: JsonObject[];
  server: ServerInfo | undefined;
  context: CallContext;
  delegation: JsonObject | undefined;
  /** RFC 3339 text, "" when absent. */
  createdAt: string;
  /** Adapter extras recorded in the trace relationship (ContextOS idempotency key, evidence refs). */
  relationshipExtras?: JsonObject;
  /** A ContextOS result envelope template: set by the `contextos` adapter. */
  contextos?: { toolCallId: string };
}

export interface ScriptStepCall {
  name: string;
  args: JsonObject;
  targets: CallTarget[];
  argProvenance: JsonObject[];
}

export interface CallTarget {
  kind: string;
  value: string;
  operation: string;
  sensitivity: string;
  discovery_method: string;
  read_only_hint: boolean;
  destructive_hint: boolean;
  idempotent_hint: boolean;
  open_world_hint: boolean;
  /** Set only by the hooks (`enrichHookCall`: command targets are `proc.exec`); never decoded from a payload. */
  endpoint_class?: string;
}

export interface ServerInfo {
  server_id: string;
  server_name: string;
  publisher: string;
  source: string;
  endpoint: string;
}

export interface CallContext {
  identity: string;
  workspace: string;
  risk_class: string;
  phase: string;
  job_id: string;
  session_id: string;
  request_id: string;
  run_id: string;
  auth_mode: string;
  oauth_evidence: JsonObject | undefined;
  auth_context: JsonObject | undefined;
  credential_scopes: string[];
  environment_fingerprint: string;
  context_envelope_path: string;
  /** ContextOS `policy_decision_id`; Ward extension. */
  approval_ref: string;
  /** W3C traceparent (ContextOS `trace_id`); Ward extension. */
  traceparent: string;
}

export function emptyContext(): CallContext {
  return {
    identity: '',
    workspace: '',
    risk_class: '',
    phase: '',
    job_id: '',
    session_id: '',
    request_id: '',
    run_id: '',
    auth_mode: '',
    oauth_evidence: undefined,
    auth_context: undefined,
    credential_scopes: [],
    environment_fingerprint: '',
    context_envelope_path: '',
    approval_ref: '',
    traceparent: '',
  };
}

export function emptyCall(name: string, args: JsonObject): ToolCall {
  return {
    name,
    args,
    script: undefined,
    target: '',
    targets: [],
    argProvenance: [],
    server: undefined,
    context: emptyContext(),
    delegation: undefined,
    createdAt: '',
  };
}

export function emptyTarget(kind: string, value: string): CallTarget {
  return {
    kind,
    value,
    operation: '',
    sensitivity: '',
    discovery_method: '',
    read_only_hint: false,
    destructive_hint: false,
    idempotent_hint: false,
    open_world_hint: false,
  };
}

/** A payload that cannot be decoded: exit 6 on the CLI, HTTP 400 from `mcp serve`. */
export function payloadError(adapter: string, message: string): WardError {
  return new WardError(ERROR_CODES.USAGE, `decode ${adapter} payload: ${message}`, {
    hint: `check the payload against the ${adapter} adapter format (docs/mcp-decision-service.md)`,
  });
}

/**
 * A payload's fields, read by the one decoder (`canon/decode.ts`, Go `encoding/json` rules: absent
 * and null are the zero value, a null element of a string list is "", a wrong type is an error),
 * worded `decode <adapter> payload: context.identity must be a string`.
 */
export class FieldReader {
  private readonly report: FaultReporter;

  constructor(
    private readonly adapter: string,
    readonly path = '',
  ) {
    this.report = (fault) => this.fail(plainFaultMessage(fault));
  }

  at(path: string): FieldReader {
    return new FieldReader(this.adapter, path);
  }

  fail(message: string): WardError {
    return payloadError(this.adapter, message);
  }

  string(obj: JsonObject, key: string): string {
    return decodeString(this.report, obj, key, this.path);
  }

  bool(obj: JsonObject, key: string): boolean {
    return decodeBool(this.report, obj, key, this.path);
  }

  object(obj: JsonObject, key: string): JsonObject | undefined {
    return decodeObject(this.report, obj, key, this.path);
  }

  objects(obj: JsonObject, key: string): JsonObject[] {
    return decodeObjectArray(this.report, obj, key, this.path);
  }

  strings(obj: JsonObject, key: string): string[] {
    return decodeStringArray(this.report, obj, key, this.path);
  }

  /** An arguments value that is an object, or a JSON string holding one (OpenAI, LangChain, Claude Code). */
  argsValue(obj: JsonObject, key: string): JsonObject {
    const v = obj[key];
    if (v === undefined || v === null) return {};
    if (isJsonObject(v)) return v;
    if (typeof v === 'string') {
      if (v.trim() === '') return {};
      let parsed: JsonValue;
      try {
        parsed = parseJsonText(v); // strict: a key repeated inside the arguments text is refused too
      } catch (err) {
        throw this.fail(`${this.path}${key} is not valid JSON: ${(err as Error).message}`);
      }
      if (parsed === null) return {};
      if (!isJsonObject(parsed)) throw this.fail(`${this.path}${key} must encode a JSON object`);
      return parsed;
    }
    throw this.fail(`${this.path}${key} must be a JSON object or a JSON string`);
  }
}
