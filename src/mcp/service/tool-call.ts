import { isJsonObject, parseJsonText, type JsonObject, type JsonValue } from '../../canon/json.js';
import { ERROR_CODES, WardError } from '../../errors.js';

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
  /** Set only by `ward hook claude-code` (command targets are `proc.exec`); never decoded from a payload. */
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

/** Go `encoding/json` field reads: absent and null are the zero value, a wrong type is an error. */
export class FieldReader {
  constructor(
    private readonly adapter: string,
    readonly path = '',
  ) {}

  at(path: string): FieldReader {
    return new FieldReader(this.adapter, path);
  }

  fail(message: string): WardError {
    return payloadError(this.adapter, message);
  }

  string(obj: JsonObject, key: string): string {
    const v = obj[key];
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string') throw this.fail(`${this.path}${key} must be a string`);
    return v;
  }

  bool(obj: JsonObject, key: string): boolean {
    const v = obj[key];
    if (v === undefined || v === null) return false;
    if (typeof v !== 'boolean') throw this.fail(`${this.path}${key} must be a boolean`);
    return v;
  }

  object(obj: JsonObject, key: string): JsonObject | undefined {
    const v = obj[key];
    if (v === undefined || v === null) return undefined;
    if (!isJsonObject(v)) throw this.fail(`${this.path}${key} must be a JSON object`);
    return v;
  }

  objects(obj: JsonObject, key: string): JsonObject[] {
    const v = obj[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) throw this.fail(`${this.path}${key} must be an array`);
    return v.map((item, i) => {
      if (item === null) return {};
      if (!isJsonObject(item)) throw this.fail(`${this.path}${key}[${i}] must be a JSON object`);
      return item;
    });
  }

  strings(obj: JsonObject, key: string): string[] {
    const v = obj[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) throw this.fail(`${this.path}${key} must be an array`);
    return v.map((item, i) => {
      if (typeof item !== 'string') throw this.fail(`${this.path}${key}[${i}] must be a string`);
      return item;
    });
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
