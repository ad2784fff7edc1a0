import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { nowUTC, parseRFC3339, formatRFC3339Nano, type GoTime } from '../../canon/gotime.js';
import type { JsonObject } from '../../canon/json.js';
import { parseStrictJson } from '../../canon/strict-json.js';
import type { ContextEnvelope } from '../../context/index.js';
import { evaluate, type EvaluateOptions, type GateOutcome } from '../../gate/evaluate.js';
import type { KillSwitchState } from '../../gate/kill-switch.js';
import { verdictRank } from '../../gate/verdict.js';
import { argsDigest as argsDigestOf, intentDigest as intentDigestOf } from '../../intent/digest.js';
import type { VerifyKey } from '../../keys/index.js';
import type { NormalizedIntent } from '../../intent/types.js';
import type { NormalizedPolicy } from '../../policy/types.js';
import type { GateRequest, GateRuntime } from '../../decision/gate-run.js';
import { decideGate } from '../../decision/gate-run.js';
import { approvalStep } from '../../decision/token-steps.js';
import { unevaluableIntent } from '../../decision/unevaluable.js';
import type { TraceSink } from '../../decision/trace-sink.js';
import { requiredApprovalScope } from '../../tokens/approval.js';
import type { ParsedToken } from '../../tokens/rollup.js';
import { buildTraceRecord, signTrace, type SignedTrace } from '../../trace/record.js';
import { WARD_VERSION } from '../../version.js';
import { intentForCall, type CallInput, type MappingOptions } from './intent.js';

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
  decide(call: CallInput, correlationId: string): CallDecision {
    const now = nowUTC();
    const ks = this.opts.killSwitch?.();
    const started = performance.now();
    const { intent, outcome } = this.pickIntent(call, now, ks);
    const latencyMs = performance.now() - started;
    let scope: string[] | undefined;
    const req: GateRequest = {
      intent,
      evaluationTime: now,
      correlationId,
      approvals: (t) => {
        scope = requiredApprovalScope(t.intent);
        return approvalStep({ tokens: () => this.tokensFor(t.intentDigest), verifyKeys: this.opts.approvalKeys })(t);
      },
    };
    if (this.opts.envelope) {
      req.contextEnvelope = this.opts.envelope.envelope;
      if (this.opts.runtime.captureIntents) req.contextEnvelopeJson = this.opts.envelope.json;
    }
    if (ks) req.killSwitch = ks;
    if (outcome) req.evaluated = { outcome, latencyMs }; // same intent, clock, envelope and kill switch
    const pending = decideGate(this.opts.runtime, req);
    return this.decisionOf(pending.trace, pending.capture, intent, scope);
  }

  /**
   * A call to a tool whose definition changed since it was pinned: blocked before policy with
   * `mcp_tool_definition_changed`, and traced like any other decision.
   */
  blockChangedTool(call: CallInput, correlationId: string): CallDecision {
    const now = nowUTC();
    const intent = intentForCall(call, this.opts.mapping, false);
    const rt = this.opts.runtime;
    const outcome = evaluate(rt.policy, intent, {
      now,
      contextNow: now,
      ...(this.opts.envelope ? { contextEnvelope: this.opts.envelope.envelope } : {}),
    });
    const prepared = outcome.preparedIntent;
    if (!prepared) return this.decide(call, correlationId); // not evaluable: the policy path blocks and traces it (or throws)
    const codes = ['mcp_tool_definition_changed'];
    const subject = { intent: prepared, argsDigest: argsDigestOf(prepared), intentDigest: intentDigestOf(prepared) };
    const trace = this.signBlock(subject, codes, codes, parseRFC3339(outcome.result.created_at), correlationId, {
      contextSetDigest: prepared.context.context_set_digest,
      contextEvidenceMode: prepared.context.context_evidence_mode,
      contextRefCount: prepared.context.context_refs.length,
      contextSource: outcome.contextSource,
    });
    return this.decisionOf(trace, undefined, intent, requiredApprovalScope(prepared));
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
    const raw = intentForCall(call, this.opts.mapping, false);
    let subject: ReturnType<typeof unevaluableIntent>;
    try {
      subject = unevaluableIntent(raw);
    } catch {
      subject = unevaluableIntent({ ...raw, args: {} }); // arguments too deep even for JSON.stringify
    }
    let createdAt: GoTime;
    try {
      createdAt = parseRFC3339(call.createdAt);
    } catch {
      createdAt = nowUTC();
    }
    const trace = this.signBlock(subject, ['fail_closed_intent_invalid'], ['intent_not_evaluable'], createdAt, correlationId, {
      contextSetDigest: '',
      contextEvidenceMode: '',
      contextRefCount: 0,
      contextSource: '',
    });
    return this.decisionOf(trace, undefined, subject.intent as unknown as JsonObject, [`tool:${subject.intent.tool_name}`]);
  }

  /** A signed `block` trace for a decision made before (or instead of) policy evaluation. */
  private signBlock(
    subject: { intent: NormalizedIntent; argsDigest: string; intentDigest: string },
    codes: string[],
    violations: string[],
    createdAt: GoTime,
    correlationId: string,
    context: { contextSetDigest: string; contextEvidenceMode: string; contextRefCount: number; contextSource: string },
  ): SignedTrace {
    const rt = this.opts.runtime;
    return signTrace(
      buildTraceRecord(
        {
          intent: subject.intent,
          argsDigest: subject.argsDigest,
          intentDigest: subject.intentDigest,
          policyDigest: rt.policy.digest,
          policyId: rt.policy.policy.schema_id,
          policyVersion: rt.policy.policy.schema_version,
          verdict: 'block',
          reasonCodes: codes,
          violations,
          matchedRule: '',
          createdAt,
          observedAt: nowUTC(),
          producerVersion: rt.producerVersion ?? WARD_VERSION,
          correlationId,
          context,
        },
        rt.traceFormat,
      ),
      rt.signingKey,
    );
  }

  /**
   * Annotations are untrusted server claims: evaluate the call with and without them and keep the
   * variant with the stricter verdict, so a claim can tighten a decision but never loosen it.
   */
  private pickIntent(call: CallInput, now: GoTime, ks: GateRequest['killSwitch']): { intent: JsonObject; outcome: GateOutcome | undefined } {
    // The options decideGate would use, so that it can take this outcome as its own.
    const options: EvaluateOptions = {
      now,
      contextNow: now,
      ...(this.opts.envelope ? { contextEnvelope: this.opts.envelope.envelope } : {}),
      producerVersion: this.opts.runtime.producerVersion ?? WARD_VERSION,
    };
    if (ks) options.killSwitch = ks;
    const policy = this.opts.runtime.policy;
    // Hints that no rule can see (only annotation selectors read them; destructiveHint also marks
    // targets destructive) cannot change the verdict: one evaluation of the annotated intent will do.
    if (call.hints && !call.hints.destructiveHint && !readsAnnotations(policy.policy)) {
      const hinted = intentForCall(call, this.opts.mapping, true);
      try {
        return { intent: hinted, outcome: evaluate(policy, hinted, options) };
      } catch {
        return { intent: hinted, outcome: undefined };
      }
    }
    const plain = intentForCall(call, this.opts.mapping, false);
    try {
      const a = evaluate(policy, plain, options);
      if (!call.hints) return { intent: plain, outcome: a };
      const hinted = intentForCall(call, this.opts.mapping, true);
      const b = evaluate(policy, hinted, options);
      return verdictRank(a.verdict) > verdictRank(b.verdict) ? { intent: plain, outcome: a } : { intent: hinted, outcome: b };
    } catch {
      return { intent: plain, outcome: undefined }; // not evaluable: decideGate reports it (or blocks it)
    }
  }

  private decisionOf(trace: SignedTrace, capture: JsonObject | undefined, intent: JsonObject, scope: string[] | undefined): CallDecision {
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
      toolName: String(trace['tool_name'] ?? intent['tool_name']),
      argsDigest: String(trace['args_digest'] ?? ''),
      approvalScope: scope ?? [`tool:${String(trace['tool_name'] ?? intent['tool_name'])}`],
      targets: describeTargets(intent['targets']),
      durable,
    };
  }

  /**
   * Approval tokens from `--approval-dir` whose intent digest is this call's: the next identical
   * call after `ward approve ... --out <dir>/...` is allowed (and traced with approval_granted).
   */
  private tokensFor(intentDigest: string): ParsedToken[] {
    let names: string[];
    try {
      names = readdirSync(this.opts.approvalDir);
    } catch {
      return [];
    }
    const out: ParsedToken[] = [];
    for (const name of names.sort()) {
      if (!name.endsWith('.json')) continue;
      const path = join(this.opts.approvalDir, name);
      let value: unknown;
      try {
        value = parseStrictJson(readFileSync(path, 'utf8')); // a duplicate-key token is never used
      } catch {
        continue;
      }
      if (typeof value === 'object' && value !== null && (value as Record<string, unknown>)['intent_digest'] === intentDigest) {
        out.push({ source: path, value: value as JsonObject });
      }
    }
    return out;
  }
}

export function rfc3339Now(): string {
  return formatRFC3339Nano(nowUTC());
}

function describeTargets(targets: unknown): string[] {
  if (!Array.isArray(targets)) return [];
  return targets.map((t) => {
    const o = (typeof t === 'object' && t !== null ? t : {}) as Record<string, unknown>;
    const op = typeof o['operation'] === 'string' && o['operation'] ? ` (${o['operation']})` : '';
    return `${String(o['kind'] ?? 'other')} ${String(o['value'] ?? '')}${op}`;
  });
}

const annotationReaders = new WeakMap<NormalizedPolicy, boolean>();

/** Does any rule select on tool annotations? (Cached per loaded policy.) */
function readsAnnotations(policy: NormalizedPolicy): boolean {
  let v = annotationReaders.get(policy);
  if (v === undefined) {
    v = policy.rules.some((r) => r.match.tool_annotations !== undefined);
    annotationReaders.set(policy, v);
  }
  return v;
}
