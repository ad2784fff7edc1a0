import { sha256Hex, uniqueSorted, type JsonObject } from '../canon/index.js';
import { FieldReader, emptyCall, emptyTarget, type ToolCall } from '../agent-hooks/tool-call.js';

/**
 * The `contextos` adapter: a ContextOS `ToolCallEnvelope` (`contextos.tool_call.v1`, field
 * reference in `notes/contextos-envelopes.md`) becomes a tool call:
 *
 * - `capability_id` → tool name, `args` → args;
 * - `tool_call_id`, `run_id`, `session_id` → `context.request_id`, `run_id`, `session_id`;
 * - `trace_id` (32 hex) → a W3C `traceparent` kept in the signed trace;
 * - `principal_chain` → `context.identity` (the last agent) and, with more than one principal, a
 *   delegation chain from the first principal to that agent;
 * - `approval_mode_*: destructive` marks every target destructive (never relaxes); with no target
 *   a `kind: other` target named after the capability carries the mark;
 * - `policy_decision_id` → `context.approval_ref`;
 * - `evidence_refs`, `idempotency_key`, `auth_ref`, `metadata.requires_approval_gate` and the
 *   tenant are bound into `auth_context.contextos` (so the intent digest covers them), and the
 *   idempotency key, evidence refs and upstream decision id are recorded in the trace relationship.
 *
 * Evidence refs are recorded, not trusted: context evidence still requires a verified envelope.
 */
export const CONTEXTOS_CALL_VERSION = 'contextos.tool_call.v1';
export const CONTEXTOS_RESULT_VERSION = 'contextos.tool_result.v1';

const TARGET_KEYS: readonly { keys: readonly string[]; kind: string }[] = [
  { keys: ['path', 'file_path', 'filepath', 'file'], kind: 'path' },
  { keys: ['url', 'uri'], kind: 'url' },
  { keys: ['host'], kind: 'host' },
];

export function decodeContextOsCall(raw: JsonObject): ToolCall {
  const f = new FieldReader('contextos');
  const version = f.string(raw, 'envelope_version').trim();
  if (version !== '' && version !== CONTEXTOS_CALL_VERSION) {
    throw f.fail(`unsupported envelope_version ${JSON.stringify(version)} (want ${CONTEXTOS_CALL_VERSION})`);
  }
  const capability = f.string(raw, 'capability_id').trim();
  if (capability === '') throw f.fail('capability_id is required');
  const call = emptyCall(capability, f.object(raw, 'args') ?? {});
  const toolCallId = f.string(raw, 'tool_call_id').trim();
  call.contextos = { toolCallId };
  const ctx = call.context;
  ctx.request_id = toolCallId;
  ctx.run_id = f.string(raw, 'run_id').trim();
  ctx.session_id = f.string(raw, 'session_id').trim();
  ctx.approval_ref = f.string(raw, 'policy_decision_id').trim();

  const traceId = f.string(raw, 'trace_id').trim().toLowerCase();
  if (/^[0-9a-f]{32}$/.test(traceId) && !/^0+$/.test(traceId)) {
    const span = sha256Hex(`${traceId}:${toolCallId}`).slice(0, 16);
    ctx.traceparent = `00-${traceId}-${span}-01`;
  }

  const named = principalChain(f, raw, call);
  const modes = ['approval_mode_requested', 'approval_mode_effective', 'approval_mode_highest'].map((k) =>
    f.string(raw, k).trim().toLowerCase(),
  );
  addTargets(call, capability, modes.includes('destructive'));
  bindAuthContext(f, raw, call, modes, uniqueSorted(named.map((p) => p.tenant)));
  return call;
}

/**
 * The named principals of `principal_chain`; the acting one (the last agent, else the last) is the
 * call's identity, and the chain up to it becomes a delegation.
 */
function principalChain(f: FieldReader, raw: JsonObject, call: ToolCall): { kind: string; id: string; tenant: string }[] {
  const principals = f.objects(raw, 'principal_chain').map((p, i) => {
    const pf = f.at(`principal_chain[${i}].`);
    return { kind: pf.string(p, 'kind').trim().toLowerCase(), id: pf.string(p, 'id').trim(), tenant: pf.string(p, 'tenant_id').trim() };
  });
  const named = principals.filter((p) => p.id !== '');
  let actingIndex = -1;
  for (let i = named.length - 1; i >= 0; i--) {
    if (named[i]!.kind === 'agent') {
      actingIndex = i;
      break;
    }
  }
  if (actingIndex < 0) actingIndex = named.length - 1;
  if (actingIndex >= 0) {
    const chain = named.slice(0, actingIndex + 1);
    call.context.identity = chain[chain.length - 1]!.id;
    if (chain.length > 1) {
      const links = [];
      for (let i = 1; i < chain.length; i++) {
        if (chain[i - 1]!.id === chain[i]!.id) continue;
        links.push({ delegator_identity: chain[i - 1]!.id, delegate_identity: chain[i]!.id });
      }
      if (links.length > 0) call.delegation = { requester_identity: call.context.identity, chain: links };
    }
  }
  return named;
}

/** Targets from well-known argument names; a destructive approval mode marks them (or the capability) destructive. */
function addTargets(call: ToolCall, capability: string, destructive: boolean): void {
  for (const { keys, kind } of TARGET_KEYS) {
    for (const key of keys) {
      const value = call.args[key];
      if (typeof value === 'string' && value.trim() !== '') call.targets.push(emptyTarget(kind, value));
    }
  }
  if (destructive) {
    if (call.targets.length === 0) call.targets.push(emptyTarget('other', capability));
    for (const t of call.targets) t.destructive_hint = true;
  }
}

/** The gateway's bindings, as `auth_context.contextos` and as relationship extras of the trace. */
function bindAuthContext(f: FieldReader, raw: JsonObject, call: ToolCall, modes: string[], tenants: string[]): void {
  const ctx = call.context;
  const evidenceRefs = uniqueSorted(f.strings(raw, 'evidence_refs'));
  const idempotencyKey = f.string(raw, 'idempotency_key').trim();
  const authRef = f.string(raw, 'auth_ref').trim();
  const metadata = f.object(raw, 'metadata') ?? {};
  const gate = f.at('metadata.').string(metadata, 'requires_approval_gate').trim();

  const bound: JsonObject = { adapter: 'contextos' };
  if (evidenceRefs.length > 0) bound['evidence_refs'] = evidenceRefs;
  if (idempotencyKey) bound['idempotency_key'] = idempotencyKey;
  if (authRef) bound['auth_ref'] = authRef;
  if (gate) bound['requires_approval_gate'] = gate;
  if (tenants.length > 0) bound['tenant_ids'] = tenants;
  const highest = modes[2] || modes[1] || modes[0];
  if (highest) bound['approval_mode'] = highest;
  ctx.auth_context = { contextos: bound };

  const extras: JsonObject = {};
  if (idempotencyKey) extras['idempotency_key'] = idempotencyKey;
  if (evidenceRefs.length > 0) extras['evidence_refs'] = evidenceRefs;
  if (ctx.approval_ref) extras['upstream_decision_ref'] = ctx.approval_ref;
  const toolCallId = call.contextos?.toolCallId ?? '';
  if (toolCallId) extras['tool_call_id'] = toolCallId;
  if (Object.keys(extras).length > 0) call.relationshipExtras = extras;
}

/**
 * The `ToolResultEnvelope` a ContextOS gateway expects when Ward refuses the call: `blocked` for
 * block and dry_run (nothing ran), `paused` for require_approval. Allow is a pass-through: the
 * gateway runs the adapter and produces its own result, so there is no envelope.
 */
export function contextOsResultEnvelope(
  toolCallId: string,
  verdict: string,
  reasonCodes: readonly string[],
  traceId: string,
): JsonObject | undefined {
  if (verdict === 'allow') return undefined;
  const status = verdict === 'require_approval' ? 'paused' : 'blocked';
  const out: JsonObject = { envelope_version: CONTEXTOS_RESULT_VERSION };
  if (toolCallId) out['tool_call_id'] = toolCallId;
  out['status'] = status;
  out['reason_codes'] = [...reasonCodes];
  out['policy_decision'] = { engine: 'ward', verdict, trace_id: traceId };
  out['mutations'] = [];
  return out;
}
