import type { GoTime, JsonObject } from '../../canon/index.js';
import type { ResolvedHosts } from '../../intent/address.js';

/** A recorded decision that can be evaluated again. */
export interface ReplayRecord {
  /** event_id for captures, `<run_id>/<intent_id>` for runpack intents. */
  id: string;
  /** Where it came from: a file, `store:capture/<id>`, or `<runpack>#<intent_id>`. */
  source: string;
  tool_name: string;
  /** The recorded decision time: replay evaluates at this instant, never at the wall clock. */
  evaluation_time: GoTime;
  /** The intent request (normalized when it came from a capture). */
  intent: JsonObject;
  /** The context envelope JSON bound to the recorded decision. */
  context_envelope?: JsonObject;
  /** What the host names resolved to when the decision was made (captures); replay uses it, never the network. */
  resolved_hosts?: ResolvedHosts;
  /** The recorded decision, when the source has one. */
  recorded?: { verdict: string; reason_codes: string[]; matched_rule: string };
}

export type NotReplayableCode = 'not_replayable_no_capture' | 'not_replayable_no_args' | 'not_replayable_no_context' | 'not_replayable_invalid';

export interface NotReplayable {
  id: string;
  source: string;
  tool_name: string;
  reason_code: NotReplayableCode;
  detail: string;
}

export interface ReplayInput {
  records: ReplayRecord[];
  not_replayable: NotReplayable[];
}

/** What one policy decided about one record. */
export interface ReplayDecision {
  verdict: string;
  reason_codes: string[];
  matched_rule: string;
  error?: string;
}

/** How a decision changed: a regress reason code (`docs/regress.md`), or `unchanged`. */
export type ChangeKind = 'policy_loosened' | 'policy_tightened' | 'verdict_changed' | 'reasons_changed' | 'replay_evaluation_error' | 'unchanged';
