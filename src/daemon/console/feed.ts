import type { JsonObject } from '../../canon/index.js';

/** One answered decision as the console shows it (the SSE `decision` event's data). */
export interface DecisionEvent {
  seq: number;
  time: string;
  trace_id: string;
  verdict: string;
  tool_name: string;
  reason_codes: string[];
  violations: string[];
  matched_rule: string;
  identity: string;
  agent_id: string;
  session_id: string;
  intent_digest: string;
  policy_digest: string;
  correlation_id: string;
}

/** Decisions kept in memory for the feed's replay and the detail page's quick facts. */
const RECENT = 1000;

/**
 * The live decision feed: every decision the daemon answers, in order, to whoever listens (the
 * SSE stream), plus the counts the policy view needs (hits per matched rule since start).
 * Publishing never blocks and never fails a decision: a listener that throws is dropped.
 */
export class DecisionFeed {
  private seq = 0;
  private readonly recent: DecisionEvent[] = [];
  private readonly listeners = new Set<(e: DecisionEvent) => void>();
  /** policy digest → rule name → decisions it matched. */
  private readonly hits = new Map<string, Map<string, number>>();
  readonly since = new Date();

  publish(output: JsonObject, who: { identity: string; agent_id: string; session_id: string; tool_name: string }): DecisionEvent {
    const e: DecisionEvent = {
      seq: ++this.seq,
      time: new Date().toISOString(),
      trace_id: str(output['trace_id']),
      verdict: str(output['verdict']),
      tool_name: who.tool_name,
      reason_codes: strings(output['reason_codes']),
      violations: strings(output['violations']),
      matched_rule: str(output['matched_rule']),
      identity: who.identity,
      agent_id: who.agent_id,
      session_id: who.session_id,
      intent_digest: str(output['intent_digest']),
      policy_digest: str(output['policy_digest']),
      correlation_id: str(output['correlation_id']),
    };
    this.recent.push(e);
    if (this.recent.length > RECENT) this.recent.shift();
    // "" counts decisions no rule matched (the policy's default verdict).
    let rules = this.hits.get(e.policy_digest);
    if (!rules) this.hits.set(e.policy_digest, (rules = new Map()));
    rules.set(e.matched_rule, (rules.get(e.matched_rule) ?? 0) + 1);
    for (const l of this.listeners) {
      try {
        l(e);
      } catch {
        this.listeners.delete(l);
      }
    }
    return e;
  }

  subscribe(listener: (e: DecisionEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Recent decisions after `seq` (oldest first). */
  after(seq: number): DecisionEvent[] {
    return this.recent.filter((e) => e.seq > seq);
  }

  find(traceId: string): DecisionEvent | undefined {
    for (let i = this.recent.length - 1; i >= 0; i--) if (this.recent[i]!.trace_id === traceId) return this.recent[i];
    return undefined;
  }

  /** Hits per rule under one policy digest since the daemon started. */
  ruleHits(policyDigest: string): ReadonlyMap<string, number> {
    return this.hits.get(policyDigest) ?? new Map();
  }
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}
