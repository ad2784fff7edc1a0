import { isJsonObject, type JsonObject } from '../canon/index.js';
import type { ResultAction } from '../policy/types.js';
import { SessionWitness } from '../mcp/proxy/witness.js';

/**
 * The witness in the SDK (docs/sdk.md "Results the host saw"): what the MCP proxy does on the wire,
 * for a host that runs its tools itself and passes their results back with `ward.observeResult`.
 * One witness per `context.session_id` of the intents (so two agents sharing a Ward do not taint
 * each other); the allowed calls are remembered by trace id until their result is observed.
 */

/** What `ward.observeResult` returns: the result to give the model, and what Ward decided about it. */
export interface WardObservedResult {
  /** `pass` (unchanged), `redact` (matches replaced by `[REDACTED:<detector>:<kind>]`) or `block` (an `isError` result naming the detectors). */
  action: ResultAction;
  /** The result to hand to the model instead of the one passed in (the same object when `pass`). */
  result: unknown;
  /** Detector/kind pairs found (`credentials:aws_access_key_id`); never the matched text. */
  detectors: string[];
  reasonCodes: string[];
  /** The signed trace of the result decision (with a `results` section in the policy); undefined otherwise. */
  traceId?: string;
  tracePath?: string;
}

/** An allowed call waiting for its result. */
export interface ObservedCall {
  /** The call's intent as decided (tool name and context are what its result's trace records). */
  intent: JsonObject;
  session: string;
}

/** Sessions and calls kept at most (oldest dropped first): a host that never observes results leaks nothing. */
const MAX_SESSIONS = 256;
const MAX_CALLS = 4096;

export class SdkWitness {
  private readonly sessions = new Map<string, SessionWitness>();
  private readonly calls = new Map<string, ObservedCall>();

  sessionOf(intent: JsonObject): string {
    const ctx = intent['context'];
    return isJsonObject(ctx) && typeof ctx['session_id'] === 'string' ? ctx['session_id'] : '';
  }

  witness(session: string): SessionWitness {
    let w = this.sessions.get(session);
    if (!w) {
      w = new SessionWitness(`witness:${session || 'sdk'}`);
      this.sessions.set(session, w);
      while (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value as string);
    }
    return w;
  }

  /**
   * The intent with the arguments Ward saw in earlier results marked `tool_output` (the earlier
   * call's trace id as `source_ref`), replacing what the caller declared for them; and the trace
   * ids, for the trace's `relationship.related_record_ids`. Unchanged (same object) when nothing matched.
   */
  provenance(intent: JsonObject): { intent: JsonObject; related?: string[] } {
    const args = intent['args'];
    if (!isJsonObject(args)) return { intent };
    const sources = this.sessions.get(this.sessionOf(intent))?.argumentSources(args);
    if (!sources) return { intent };
    const declared = Array.isArray(intent['arg_provenance']) ? (intent['arg_provenance'] as unknown[]) : [];
    const witnessedPaths = new Set([...sources.keys()].map((k) => `$.${k}`));
    const kept = declared.filter((p) => !(isJsonObject(p) && typeof p['arg_path'] === 'string' && witnessedPaths.has(p['arg_path'])));
    const added = [...sources].map(([name, traceId]) => ({ arg_path: `$.${name}`, source: 'tool_output', source_ref: traceId }));
    return { intent: { ...intent, arg_provenance: [...kept, ...added] as JsonObject[] }, related: [...new Set(sources.values())].sort() };
  }

  /** Remember an allowed call until its result is observed. */
  allowed(traceId: string, intent: JsonObject): void {
    this.calls.delete(traceId);
    this.calls.set(traceId, { intent, session: this.sessionOf(intent) });
    while (this.calls.size > MAX_CALLS) this.calls.delete(this.calls.keys().next().value as string);
  }

  /** The call a result belongs to (consumed: a result is observed once). */
  take(traceId: string): ObservedCall | undefined {
    const call = this.calls.get(traceId);
    this.calls.delete(traceId);
    return call;
  }
}
