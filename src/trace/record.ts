import {
  formatRFC3339Nano,
  shortId,
  toUTC,
  uniqueSorted,
  type GoTime,
  type JsonObject,
  type JsonValue,
} from '../canon/index.js';
import { agentIdentityPayload, delegationDigest, intentDigestPayload } from '../intent/digest.js';
import type { NormalizedIntent } from '../intent/types.js';
import { canonicalTargetNotes } from '../intent/canonical.js';
import type { ResolvedHosts } from '../intent/address.js';
import { discoveredTargetNotes } from '../intent/discover.js';
import type { Verdict } from '../policy/types.js';
import { buildTraceRelationship } from './relationship.js';
import { signDigestedJson, type DigestSignature } from './sign.js';
import type { TraceContext } from './trace-context.js';
import type { SigningKey } from '../keys/index.js';

export const TRACE_SCHEMA_ID = 'gait.gate.trace';
export const TRACE_SCHEMA_VERSION = '1.0.0';

/**
 * `ward` (the default) is the reference field set plus `reason_codes`, `matched_rule` and, when
 * there is something to say, `trace_context`, `canonical_targets` and `discovered_targets`, all inside the signature. `gait` is exactly the reference field set, so
 * the reference's own `trace verify` accepts it (it drops unknown fields before hashing, so it
 * cannot verify a `ward` record).
 */
export type TraceFormat = 'ward' | 'gait';
export const TRACE_FORMATS: readonly TraceFormat[] = ['ward', 'gait'];

/** Fields that exist only in `ward`-format records. */
export const WARD_ONLY_TRACE_FIELDS: readonly string[] = ['reason_codes', 'matched_rule', 'trace_context', 'canonical_targets', 'discovered_targets'];

export interface TraceContextSummary {
  contextSetDigest: string;
  contextEvidenceMode: string;
  contextRefCount: number;
  contextSource: string;
}

export interface TraceStepVerdict {
  index: number;
  tool_name: string;
  verdict: string;
  reason_codes?: readonly string[];
  violations?: readonly string[];
  matched_rule?: string;
}

export interface TraceScriptSummary {
  stepCount: number;
  scriptHash: string;
  compositeRiskClass: string;
  stepVerdicts: readonly TraceStepVerdict[];
}

export interface TraceApprovedScript {
  preApproved: boolean;
  patternId: string;
  registryReason: string;
}

/** The broker step's outputs (`gate.md` §3.6 step 9); each is omitted when empty. */
export interface TraceBroker {
  broker_credential_ref?: string;
  broker_credential_source?: string;
  broker_credential_access_type?: string;
  broker_credential_issuer?: string;
  broker_request_digest?: string;
  broker_target_binding?: string;
  broker_run_binding?: string;
  broker_job_binding?: string;
}

/** Everything a `gait.gate.trace` record is built from (`gate.md` §6.1). */
export interface TraceInput {
  /** The normalized *prepared* intent (claims stripped or derived from a verified envelope). */
  intent: NormalizedIntent;
  argsDigest: string;
  intentDigest: string;
  policyDigest: string;
  /** The policy's `schema_id` / `schema_version` (`gait.gate.policy` / `1.0.0`), not a rule name. */
  policyId: string;
  policyVersion: string;
  /** Final verdict, reason codes and violations after CLI post-processing. */
  verdict: Verdict;
  reasonCodes: readonly string[];
  violations: readonly string[];
  /** Comma-joined tier rule names ("" when no rule matched). */
  matchedRule: string;
  /** GateResult `created_at`: the deterministic decision time. */
  createdAt: GoTime;
  /** Wall clock at emission (nanoseconds). */
  observedAt: GoTime;
  producerVersion: string;
  correlationId?: string;
  /** Core evaluation latency; clamped to >= 0 and omitted when 0. */
  latencyMs?: number;
  context?: TraceContextSummary;
  script?: TraceScriptSummary;
  approvedScript?: TraceApprovedScript;
  broker?: TraceBroker;
  /** Valid approval token ids comma-joined, or `--approval-token-ref`. */
  approvalTokenRef?: string;
  /** Valid delegation token ids comma-joined (falls back to the intent's first `token_refs`). */
  delegationTokenRef?: string;
  /** Decision objects, already in their trace shape (times rendered, zero times included). */
  freezeWindow?: JsonObject;
  sandbox?: JsonObject;
  killSwitch?: JsonObject;
  mcpTrust?: JsonObject;
  /**
   * W3C trace context from a transport (daemon header, MCP `_meta`), validated with
   * `parseTraceContext`; wins over the intent's own `context.traceparent`. `ward` format only.
   */
  traceContext?: TraceContext;
  /** The targets' host names as resolved before evaluation: recorded in `canonical_targets`. `ward` format only. */
  resolvedHosts?: ResolvedHosts | undefined;
}

/** A trace record before signing; JSON data in the reference field order. */
export type UnsignedTrace = JsonObject;
export type SignedTrace = JsonObject & { signature: DigestSignature };

export function traceIdFor(policyDigest: string, intentDigest: string, verdict: string): string {
  return shortId(`${policyDigest}:${intentDigest}:${verdict}`);
}

export function eventIdFor(traceId: string, observedAt: GoTime): string {
  return shortId(`${traceId}:${formatRFC3339Nano(toUTC(observedAt))}`);
}

/** Prepared-context members copied into the trace, in their Go (omitempty) rendering. */
const CONTEXT_COPY_FIELDS = [
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
  'credential_subject',
  'credential_owner',
  'credential_target_binding',
  'credential_run_binding',
  'credential_job_binding',
  'credential_ttl_seconds',
  'approval_ref',
  'wrkr_inventory_ref',
  'agent_action_bom_ref',
] as const;

export function buildTraceRecord(input: TraceInput, format: TraceFormat): UnsignedTrace {
  const { intent } = input;
  const ctx = intent.context;
  const observedAt = formatRFC3339Nano(toUTC(input.observedAt));
  const traceId = traceIdFor(input.policyDigest, input.intentDigest, input.verdict);
  const matchedRuleIds = input.script ? scriptMatchedRuleIds(input.script.stepVerdicts) : [];
  const r: JsonObject = {};
  r['schema_id'] = TRACE_SCHEMA_ID;
  r['schema_version'] = TRACE_SCHEMA_VERSION;
  r['created_at'] = formatRFC3339Nano(toUTC(input.createdAt));
  r['observed_at'] = observedAt;
  r['producer_version'] = input.producerVersion || '0.0.0-dev';
  r['trace_id'] = traceId;
  r['event_id'] = shortId(`${traceId}:${observedAt}`);
  put(r, 'correlation_id', input.correlationId);
  r['tool_name'] = intent.tool_name;
  r['args_digest'] = input.argsDigest;
  r['intent_digest'] = input.intentDigest;
  r['policy_digest'] = input.policyDigest;
  // contextPayload(ctx)[field] for each, without building the whole payload (its members are the
  // context's own values when set; put() skips the unset ones as the payload does).
  for (const field of CONTEXT_COPY_FIELDS) {
    if (field === 'agent_identity') put(r, field, ctx.agent_identity ? agentIdentityPayload(ctx.agent_identity) : undefined);
    else put(r, field, ctx[field]);
  }
  for (const [field, value] of Object.entries(input.broker ?? {})) put(r, field, value);
  r['policy_id'] = input.policyId;
  r['policy_version'] = input.policyVersion;
  put(r, 'matched_rule_ids', matchedRuleIds);
  r['verdict'] = input.verdict;
  if (input.context) {
    put(r, 'context_set_digest', input.context.contextSetDigest);
    put(r, 'context_evidence_mode', input.context.contextEvidenceMode);
    put(r, 'context_ref_count', input.context.contextRefCount);
    put(r, 'context_source', input.context.contextSource);
  }
  if (input.script) {
    r['script'] = true;
    put(r, 'step_count', input.script.stepCount);
    put(r, 'script_hash', input.script.scriptHash);
    put(r, 'composite_risk_class', input.script.compositeRiskClass);
    put(r, 'step_verdicts', input.script.stepVerdicts.map(stepVerdictJson));
  }
  if (input.approvedScript) {
    put(r, 'pre_approved', input.approvedScript.preApproved);
    put(r, 'pattern_id', input.approvedScript.patternId);
    put(r, 'registry_reason', input.approvedScript.registryReason);
  }
  put(r, 'violations', uniqueSorted(input.violations));
  put(r, 'latency_ms', Math.max(0, input.latencyMs ?? 0));
  put(r, 'approval_token_ref', input.approvalTokenRef);
  if (intent.delegation) r['delegation_ref'] = delegationRefJson(input);
  if (input.freezeWindow) r['freeze_window'] = input.freezeWindow;
  if (input.sandbox) r['sandbox'] = input.sandbox;
  if (input.killSwitch) r['kill_switch'] = input.killSwitch;
  if (input.mcpTrust) r['mcp_trust'] = input.mcpTrust;
  r['relationship'] = buildTraceRelationship({
    traceId,
    toolName: intent.tool_name,
    identity: ctx.identity,
    sessionId: ctx.session_id,
    policyId: input.policyId,
    policyVersion: input.policyVersion,
    policyDigest: input.policyDigest,
    matchedRuleIds,
    delegation: intent.delegation,
  });
  if (intent.skill_provenance) put(r, 'skill_provenance', intentDigestPayload(intent)['skill_provenance']);
  if (format === 'ward') {
    r['reason_codes'] = uniqueSorted(input.reasonCodes);
    r['matched_rule'] = input.matchedRule;
    put(r, 'canonical_targets', canonicalTargetNotes(intent, input.resolvedHosts));
    put(r, 'discovered_targets', discoveredTargetNotes(intent));
    const traceContext = input.traceContext ?? intent.trace_context;
    if (traceContext) {
      r['trace_context'] = traceContext.tracestate
        ? { traceparent: traceContext.traceparent, tracestate: traceContext.tracestate }
        : { traceparent: traceContext.traceparent };
    }
  }
  return r;
}

/** Sign a built record (§6.2). The signature is appended last, as the reference writes it. */
export function signTrace(unsigned: UnsignedTrace, key: SigningKey): SignedTrace {
  return { ...unsigned, signature: signDigestedJson(unsigned, key) };
}

function scriptMatchedRuleIds(steps: readonly TraceStepVerdict[]): string[] {
  return uniqueSorted(steps.flatMap((step) => (step.matched_rule ?? '').split(',')));
}

function delegationRefJson(input: TraceInput): JsonObject {
  const delegation = input.intent.delegation!;
  const ref: JsonObject = {};
  put(ref, 'delegation_token_ref', input.delegationTokenRef || delegation.token_refs[0]);
  put(ref, 'requester_identity', delegation.requester_identity);
  put(ref, 'delegation_depth', delegation.chain.length);
  put(ref, 'scope_class', delegation.scope_class);
  put(ref, 'chain_digest', delegationDigest(delegation));
  put(ref, 'reason_codes', uniqueSorted(input.reasonCodes.filter((code) => code.startsWith('delegation_'))));
  return ref;
}

function stepVerdictJson(step: TraceStepVerdict): JsonObject {
  const out: JsonObject = { index: step.index, tool_name: step.tool_name, verdict: step.verdict };
  put(out, 'reason_codes', step.reason_codes ? [...step.reason_codes] : undefined);
  put(out, 'violations', step.violations ? [...step.violations] : undefined);
  put(out, 'matched_rule', step.matched_rule);
  return out;
}

/** Go `omitempty`: skip "", 0, false, empty lists and undefined. */
function put(target: JsonObject, key: string, value: JsonValue | undefined): void {
  if (value === undefined || value === '' || value === 0 || value === false || value === null) return;
  if (Array.isArray(value) && value.length === 0) return;
  target[key] = value;
}

