import { nowUTC, type JsonObject } from '../../canon/index.js';
import type { ContextEnvelope } from '../../context/index.js';
import type { KillSwitchState } from '../../gate/kill-switch.js';
import type { VerifyKey } from '../../keys/index.js';
import type { NormalizedIntent } from '../../intent/types.js';
import type { GateRuntime } from '../../decision/gate-run.js';
import { blockBeforePolicy } from '../../decision/pipeline.js';
import { resolveIntentHosts } from '../../decision/host-resolution.js';
import { policyNeedsResolution } from '../../gate/host-list.js';
import type { ResolvedHosts } from '../../intent/address.js';
import { signResultDecision } from '../../decision/result-decision.js';
import type { Verdict } from '../../policy/types.js';
import type { TraceSink } from '../../decision/trace-sink.js';
import { requiredApprovalScope } from '../../tokens/index.js';
import type { SignedTrace } from '../../trace/index.js';
import { callReadings, decideSignedCall, describeIntent, type DecideOptions, type DescribedIntent, type SignedCallDecision } from './call-decision.js';
import type { DecisionThread } from './decision-thread.js';
import { intentForCall, type CallInput, type MappingOptions } from './intent.js';

export type { DecideOptions } from './call-decision.js';

/** What the session needs to know about one decided `tools/call`. */
export interface CallDecision {
  verdict: string;
  reasonCodes: string[];
  violations: string[];
  matchedRule: string;
  traceId: string;
  intentDigest: string;
  policyDigest: string;
  /** The intent's tool name (with `--tool-prefix`). */
  toolName: string;
  argsDigest: string;
  /** Scopes an approval token must hold (for the `ward approve` command in the reply). */
  approvalScope: string[];
  /** The intent's targets, for people ("path /x/notes.txt (delete)"). */
  targets: string[];
  /** Resolves when the signed trace is durable (its location); rejects if it could not be written. */
  durable: Promise<string>;
  /** Where the signed trace will be, when the sink knows it at decision time (telemetry's `ward.trace_path`). */
  tracePath?: string | undefined;
  /** Approvals the winning rule asks for (max(min_approvals, 1)); set when the approval step ran. */
  requiredApprovals?: number | undefined;
  /**
   * The prepared intent the approval step checked tokens against (set when it ran): what an
   * approvals inbox is sent, so the daemon derives what a person sees from the call itself.
   */
  approvalIntent?: NormalizedIntent | undefined;
  /** The policy binds an approval of this call to its session (`approval_binding: session`). */
  approvalSessionBound?: boolean | undefined;
}

/** What the result firewall decided about one result, for its trace. */
export interface ResultOutcome {
  verdict: Verdict;
  reasonCodes: readonly string[];
  violations: readonly string[];
  /** JSON facts about the result (digests, detector names, counts): the subject's arguments. */
  facts: JsonObject;
  /** When Ward saw the result (RFC 3339). */
  observedAt: string;
}

export interface ResultTrace {
  traceId: string;
  verdict: string;
  reasonCodes: string[];
  intentDigest: string;
  policyDigest: string;
  tracePath?: string | undefined;
  durable: Promise<string>;
}

export interface GatekeeperOptions {
  runtime: GateRuntime;
  sink: TraceSink;
  mapping: MappingOptions;
  envelope?: { envelope: ContextEnvelope; json: JsonObject } | undefined;
  /** `--approval-dir`: approval tokens dropped here are used for calls that need approval. */
  approvalDir: string;
  /** Keys approval tokens must verify with (default: the signing key). */
  approvalKeys: readonly VerifyKey[];
  /** Current kill-switch state, read per call (reloaded by the host when the file changes). */
  killSwitch?: () => { state: KillSwitchState } | { unavailable: true } | undefined;
  /**
   * Where large calls are decided off the event loop (`--listen`: one session's large call must
   * not stall the others; docs/mcp-proxy.md "Limits"). Undefined: every call is decided inline.
   */
  thread?: DecisionThread | undefined;
}

/**
 * Decides `tools/call`s: maps the call to an intent, evaluates it (synchronously), signs the trace
 * and hands it to the trace sink. The trace write proceeds in parallel with whatever the caller does
 * next; `durable` says when it is done.
 */
export class Gatekeeper {
  constructor(private readonly opts: GatekeeperOptions) {}

  get runtime(): GateRuntime {
    return this.opts.runtime;
  }

  get mapping(): MappingOptions {
    return this.opts.mapping;
  }

  /**
   * Decide one call: evaluate, sign, and hand the trace to the sink. Nothing here forwards
   * anything: the host forwards an allowed call only once `durable` has resolved (the decision is
   * final and its trace accepted by the sink). Throws when the call cannot be evaluated or its trace
   * cannot be signed (e.g. a non-finite number or nesting too deep for JCS in the arguments); the
   * host then answers with `refuse`.
   */
  decide(call: CallInput, correlationId: string, opts: DecideOptions = {}): CallDecision {
    return this.decisionOfSigned(decideSignedCall(this.opts, call, correlationId, opts, this.opts.killSwitch?.()));
  }

  /** Can `decideOffLoop` run here (a decision thread was configured)? */
  get offLoop(): boolean {
    return this.opts.thread !== undefined;
  }

  /**
   * `decide` on the decision thread: the same function over the same runtime, policy and kill
   * switch as of now, so the verdict, digests and trace are those `decide` would produce; only the
   * sink write happens here, on the event loop, as for an inline decision. Rejects like `decide`
   * throws (a `WardError` from the decision itself), or with a `DecisionThreadError` when the
   * thread could not answer (it died, or missed its deadline): nothing was decided then.
   */
  async decideOffLoop(call: CallInput, correlationId: string, opts: DecideOptions = {}): Promise<CallDecision> {
    if (!this.opts.thread) return this.decide(call, correlationId, opts);
    const signed = await this.opts.thread.decide(this.opts.runtime.policy, { call, correlationId, opts, killSwitch: this.opts.killSwitch?.() });
    return this.decisionOfSigned(signed);
  }

  private decisionOfSigned(signed: SignedCallDecision): CallDecision {
    // Assigned, not spread into a new literal: on Node 20 a literal that starts with a spread and
    // adds members costs about a microsecond per added member.
    const decision = this.decisionOf(signed.trace, signed.capture, signed.decided, signed.scope);
    decision.requiredApprovals = signed.requiredApprovals;
    decision.approvalIntent = signed.approvalIntent;
    decision.approvalSessionBound = signed.approvalSessionBound;
    return decision;
  }

  /**
   * The call's host names resolved (decision/host-resolution.ts), or undefined at once when the
   * policy's domain lists name no address, range or class — the common case stays synchronous.
   * A call whose intent cannot be built resolves nothing: `decide` refuses it.
   */
  resolveHosts(call: CallInput): Promise<ResolvedHosts | undefined> | undefined {
    const policy = this.opts.runtime.policy.policy;
    if (!policyNeedsResolution(policy)) return undefined;
    let readings: JsonObject[];
    try {
      readings = callReadings(this.opts, call);
    } catch {
      return undefined;
    }
    return resolveIntentHosts(policy, readings);
  }

  /**
   * A call to a tool whose definition changed since it was pinned: blocked before policy with
   * `mcp_tool_definition_changed` (or, for a tool held for a suspicious definition, the witness's
   * `codes`), and traced like any other decision.
   */
  blockChangedTool(call: CallInput, correlationId: string, codes?: readonly string[]): CallDecision {
    const intent = intentForCall(call, this.opts.mapping, false);
    const inputs = { now: nowUTC(), ...(this.opts.envelope ? { contextEnvelope: this.opts.envelope.envelope } : {}) };
    const blocked = blockBeforePolicy(this.opts.runtime, { kind: 'tool_changed', codes, intent, inputs, correlationId });
    if (!blocked) return this.decide(call, correlationId); // not evaluable: the policy path blocks and traces it (or throws)
    return this.decisionOf(blocked.trace, undefined, describeIntent(intent), requiredApprovalScope(blocked.subject.intent));
  }

  /**
   * A tool call Ward refuses without deciding it by policy: its arguments cannot be evaluated or
   * traced (a number such as 1e400, nesting deeper than JCS allows), or it did not arrive as a
   * well-formed `tools/call` request (a notification, a method spelled `Tools/Call`). It is blocked
   * with `fail_closed_intent_invalid` and traced like any other decision. The trace's subject is the
   * stand-in a gate decision uses for an unevaluable intent (tool name and context strings; the
   * digests cover the raw request), so the refusal can always be signed.
   */
  refuse(call: CallInput, correlationId: string): CallDecision {
    const raw = intentForCall(call, this.opts.mapping, false, false);
    const { trace, subject } = blockBeforePolicy(this.opts.runtime, { kind: 'refused', intent: raw, createdAt: call.createdAt, correlationId })!;
    return this.decisionOf(trace, undefined, describeIntent(subject.intent as unknown as JsonObject), [`tool:${subject.intent.tool_name}`]);
  }

  /**
   * Ward's decision on a call's result (the result firewall, docs/witness.md): signed as a trace
   * linked to the call's (`relationship.parent_record_id`) and handed to the sink like any other.
   * `facts` are digests and detector names only — never the result's text — and become the
   * arguments of the result's subject intent (same tool name and context as the call).
   */
  decideResult(call: CallInput, callTraceId: string, correlationId: string, outcome: ResultOutcome): ResultTrace {
    const raw = intentForCall({ ...call, arguments: {}, witnessed: undefined, hints: undefined, createdAt: outcome.observedAt }, this.opts.mapping, false);
    raw['args'] = { call_trace_id: callTraceId, ...outcome.facts };
    raw['targets'] = [];
    raw['arg_provenance'] = [{ arg_path: '$', source: 'tool_output', source_ref: callTraceId }];
    const { trace } = signResultDecision(this.opts.runtime, {
      intent: raw,
      verdict: outcome.verdict,
      reasonCodes: outcome.reasonCodes,
      violations: outcome.violations,
      callTraceId,
      correlationId,
    });
    const durable = this.opts.sink.write(trace, undefined);
    durable.catch(() => undefined); // observed by the session
    return {
      traceId: String(trace['trace_id']),
      verdict: String(trace['verdict']),
      reasonCodes: (trace['reason_codes'] as string[] | undefined) ?? [],
      intentDigest: String(trace['intent_digest']),
      policyDigest: String(trace['policy_digest']),
      tracePath: this.opts.sink.locate?.(trace),
      durable,
    };
  }

  private decisionOf(trace: SignedTrace, capture: JsonObject | undefined, intent: DescribedIntent, scope: string[] | undefined): CallDecision {
    const durable = this.opts.sink.write(trace, capture);
    durable.catch(() => undefined); // observed by the session; never an unhandled rejection
    return {
      verdict: String(trace['verdict']),
      reasonCodes: (trace['reason_codes'] as string[] | undefined) ?? [],
      violations: (trace['violations'] as string[] | undefined) ?? [],
      matchedRule: String(trace['matched_rule'] ?? ''),
      traceId: String(trace['trace_id']),
      intentDigest: String(trace['intent_digest']),
      policyDigest: String(trace['policy_digest']),
      toolName: String(trace['tool_name'] ?? intent.toolName),
      argsDigest: String(trace['args_digest'] ?? ''),
      approvalScope: scope ?? [`tool:${String(trace['tool_name'] ?? intent.toolName)}`],
      targets: intent.targets,
      durable,
      tracePath: this.opts.sink.locate?.(trace),
    };
  }
}

