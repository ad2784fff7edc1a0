import { isJsonObject, type JsonObject, type JsonValue } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { decodeClaudeCodeCall } from '../agent-hooks/claude-code.js';
import { decodeContextOsCall } from './contextos.js';
import {
  FieldReader,
  emptyCall,
  emptyContext,
  emptyTarget,
  payloadError,
  type CallContext,
  type CallTarget,
  type ScriptStepCall,
  type ServerInfo,
  type ToolCall,
} from '../agent-hooks/tool-call.js';

/** The payload adapters (`mcp-decision-service.md` §6.1), plus Ward's `contextos`. */
export const ADAPTERS = ['mcp', 'openai', 'anthropic', 'claude_code', 'langchain', 'contextos'] as const;
export type AdapterName = (typeof ADAPTERS)[number];

/** Canonical adapter name; `claude-code` and `claudecode` are aliases of `claude_code`. */
export function normalizeAdapter(value: string | undefined): AdapterName {
  const name = (value ?? '').trim().toLowerCase();
  if (name === '') return 'mcp';
  if (name === 'claude-code' || name === 'claudecode') return 'claude_code';
  if ((ADAPTERS as readonly string[]).includes(name)) return name as AdapterName;
  throw new WardError(ERROR_CODES.USAGE, `unsupported adapter: ${name}`, {
    hint: `use one of ${ADAPTERS.join(', ')}`,
  });
}

/** §6.3 step 1: decode one payload with its adapter. Throws a usage error (exit 6 / HTTP 400). */
export function decodeToolCall(adapter: AdapterName, payload: JsonValue): ToolCall {
  if (!isJsonObject(payload)) throw payloadError(adapter, 'payload must be a JSON object');
  switch (adapter) {
    case 'mcp':
      return decodeMcpCall(payload);
    case 'openai':
      return decodeOpenAiCall(payload);
    case 'anthropic':
      return decodeAnthropicCall(payload);
    case 'claude_code':
      return decodeClaudeCodeCall(payload);
    case 'langchain':
      return decodeLangChainCall(payload);
    case 'contextos':
      return decodeContextOsCall(payload);
  }
}

// --- mcp: the reference's own ToolCall ------------------------------------------------------------

function decodeMcpCall(raw: JsonObject): ToolCall {
  const f = new FieldReader('mcp');
  const name = f.string(raw, 'name').trim();
  const scriptRaw = f.object(raw, 'script');
  const call = emptyCall(name, f.object(raw, 'args') ?? {});
  if (scriptRaw) {
    const steps = f.at('script.').objects(scriptRaw, 'steps').map((step, i): ScriptStepCall => {
      const sf = f.at(`script.steps[${i}].`);
      return {
        name: sf.string(step, 'name').trim(),
        args: sf.object(step, 'args') ?? {},
        targets: sf.objects(step, 'targets').map((t, j) => decodeTarget(f.at(`script.steps[${i}].targets[${j}].`), t)),
        argProvenance: sf.objects(step, 'arg_provenance'),
      };
    });
    if (steps.length === 0) throw f.fail('script.steps must not be empty');
    steps.forEach((s, i) => {
      if (s.name === '') throw f.fail(`script.steps[${i}].name is required`);
    });
    call.script = { steps };
  } else if (name === '') {
    throw f.fail('name is required');
  }
  call.target = f.string(raw, 'target').trim();
  call.targets = f.objects(raw, 'targets').map((t, i) => decodeTarget(f.at(`targets[${i}].`), t));
  call.argProvenance = f.objects(raw, 'arg_provenance');
  const server = f.object(raw, 'server');
  if (server) call.server = decodeServerInfo(f.at('server.'), server);
  const context = f.object(raw, 'context');
  if (context) call.context = decodeContext(f.at('context.'), context);
  call.delegation = f.object(raw, 'delegation');
  call.createdAt = f.string(raw, 'created_at');
  return call;
}

const HINTS = [
  ['read_only_hint', 'readOnlyHint'],
  ['destructive_hint', 'destructiveHint'],
  ['idempotent_hint', 'idempotentHint'],
  ['open_world_hint', 'openWorldHint'],
] as const;

/** Hint aliases are OR-ed; `annotations` (bool or "true"/"false") override them (§6.2). */
function decodeTarget(f: FieldReader, raw: JsonObject): CallTarget {
  const t = emptyTarget(f.string(raw, 'kind'), f.string(raw, 'value'));
  t.operation = f.string(raw, 'operation');
  t.sensitivity = f.string(raw, 'sensitivity');
  t.discovery_method = f.string(raw, 'discovery_method') || f.string(raw, 'discoveryMethod');
  for (const [snake, camel] of HINTS) t[snake] = f.bool(raw, snake) || f.bool(raw, camel);
  const annotations = f.object(raw, 'annotations');
  if (annotations) {
    const af = f.at(`${f.path}annotations.`);
    for (const [snake, camel] of HINTS) {
      const value = annotationBool(af, annotations, snake) ?? annotationBool(af, annotations, camel);
      if (value !== undefined) t[snake] = value;
    }
    const discovery = af.string(annotations, 'discovery_method') || af.string(annotations, 'discoveryMethod');
    if (discovery !== '') t.discovery_method = discovery;
  }
  return t;
}

function annotationBool(f: FieldReader, obj: JsonObject, key: string): boolean | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (s === 'true') return true;
    if (s === 'false') return false;
  }
  throw f.fail(`${f.path}${key} must be a boolean or "true"/"false"`);
}

function decodeServerInfo(f: FieldReader, raw: JsonObject): ServerInfo {
  return {
    server_id: f.string(raw, 'server_id'),
    server_name: f.string(raw, 'server_name'),
    publisher: f.string(raw, 'publisher'),
    source: f.string(raw, 'source'),
    endpoint: f.string(raw, 'endpoint'),
  };
}

const OAUTH_STRING_FIELDS = [
  'issuer',
  'subject',
  'client_id',
  'token_type',
  'dcr_client_id',
  'redirect_uri',
  'token_binding',
  'auth_time',
  'evidence_ref',
] as const;

function decodeContext(f: FieldReader, raw: JsonObject): CallContext {
  const c = emptyContext();
  for (const key of [
    'identity',
    'workspace',
    'risk_class',
    'phase',
    'job_id',
    'session_id',
    'request_id',
    'run_id',
    'auth_mode',
    'environment_fingerprint',
    'context_envelope_path',
  ] as const) {
    c[key] = f.string(raw, key);
  }
  const oauth = f.object(raw, 'oauth_evidence');
  if (oauth) {
    const of = f.at(`${f.path}oauth_evidence.`);
    const evidence: JsonObject = {};
    for (const key of OAUTH_STRING_FIELDS) {
      const v = of.string(oauth, key).trim();
      if (v !== '') evidence[key] = v;
    }
    for (const key of ['audience', 'scopes'] as const) {
      const list = of.strings(oauth, key).map((s) => s.trim()).filter((s) => s !== '');
      if (list.length > 0) evidence[key] = list;
    }
    c.oauth_evidence = evidence;
  }
  c.auth_context = f.object(raw, 'auth_context');
  c.credential_scopes = f.strings(raw, 'credential_scopes');
  return c;
}

// --- openai, anthropic, langchain -----------------------------------------------------------------

function decodeOpenAiCall(raw: JsonObject): ToolCall {
  const f = new FieldReader('openai');
  const fn = f.object(raw, 'function');
  if (!fn) throw f.fail('function is required');
  const ff = f.at('function.');
  const name = ff.string(fn, 'name').trim();
  if (name === '') throw ff.fail('function.name is required');
  return emptyCall(name, ff.argsValue(fn, 'arguments'));
}

function decodeAnthropicCall(raw: JsonObject): ToolCall {
  const f = new FieldReader('anthropic');
  const type = f.string(raw, 'type').trim();
  if (type !== '' && type !== 'tool_use') throw f.fail(`type must be tool_use, got ${JSON.stringify(type)}`);
  const name = f.string(raw, 'name').trim();
  if (name === '') throw f.fail('name is required');
  return emptyCall(name, f.object(raw, 'input') ?? {});
}

function decodeLangChainCall(raw: JsonObject): ToolCall {
  const f = new FieldReader('langchain');
  const name = f.string(raw, 'tool').trim();
  if (name === '') throw f.fail('tool is required');
  return emptyCall(name, f.argsValue(raw, 'tool_input'));
}
