import { formatRFC3339Nano, goLower, goTrim, toUTC, uniqueSorted, type GoTime, type JsonObject } from '../canon/index.js';
import { ERROR_CODES, WardError, isWardError } from '../errors.js';
import type { IntentContext, NormalizedIntent } from '../intent/types.js';
import { CONTEXT_CLOCK_SKEW_SECONDS, envelopeContextAgeSeconds, futureEvidence } from './age.js';
import { isVerifiedContextEnvelope, normalizeContextEnvelope } from './normalize.js';
import type { ContextEnvelope } from './types.js';

/** `context_source` when an envelope was bound (`gate.md` §3.1 step 5). */
export const CONTEXT_SOURCE_ENVELOPE = 'context_envelope';

/** The auth_context key that carries the derived freshness (`gate.md` §4.4). */
export const CONTEXT_AGE_KEY = 'context_age_seconds';

export interface BoundIntent {
  /** The prepared intent. It shares every unchanged sub-object with the input: treat it as immutable. */
  intent: NormalizedIntent;
  /** `context_envelope` when an envelope was bound, else "". */
  contextSource: string;
}

/**
 * `prepareIntentForEvaluation` (`gate.md` §4.5). The intent's context-evidence fields are claims
 * and never authoritative:
 *  - without an envelope they are stripped (digest "", mode "", refs [], and
 *    `auth_context.context_age_seconds` deleted), so a claim can never satisfy a context rule;
 *  - with an envelope, non-empty claims must agree with it (case-insensitively), and then digest,
 *    mode, refs and age are replaced by values derived from the verified envelope at `now`;
 *  - evidence dated more than CONTEXT_CLOCK_SKEW_SECONDS after `now` (a record's `retrieved_at`, or
 *    `created_at` without records) is refused: it would count as age 0, so no freshness limit
 *    could ever reject it (Ward decision; the reference counts it 0).
 * Throws WardError ENVELOPE_BINDING on a conflict; the evaluator treats that as "intent not
 * evaluable". The input intent is never mutated; only the context (and auth_context) is copied.
 */
export function bindContextEvidence(
  intent: NormalizedIntent,
  envelope: ContextEnvelope | undefined,
  now: GoTime,
): BoundIntent {
  const context = intent.context;
  if (envelope === undefined) {
    return { intent: withEvidence(intent, '', '', [], withoutAge(context.auth_context)), contextSource: '' };
  }
  const verified = reverify(envelope);
  if (context.context_set_digest !== '' && !equalFold(context.context_set_digest, verified.context_set_digest)) {
    throw bindingError('context envelope digest does not match context.context_set_digest');
  }
  if (context.context_evidence_mode !== '' && !equalFold(context.context_evidence_mode, verified.evidence_mode)) {
    throw bindingError('context envelope evidence mode does not match context.context_evidence_mode');
  }
  const future = futureEvidence(verified, now);
  if (future) {
    const what = future.field === 'retrieved_at' ? `record ${JSON.stringify(future.refId)} retrieved_at` : 'created_at (no records)';
    const time = formatRFC3339Nano(future.time);
    const at = formatRFC3339Nano(toUTC(now));
    throw new WardError(
      ERROR_CODES.ENVELOPE_BINDING,
      `context envelope ${future.field} is in the future: ${what} ${time} is after the evaluation time ${at} by more than the allowed clock skew (${CONTEXT_CLOCK_SKEW_SECONDS}s)`,
      {
        details: {
          envelope_problem: `${future.field}_in_future`,
          ...(future.field === 'retrieved_at' ? { ref_id: future.refId } : {}),
          [future.field]: time,
          evaluation_time: at,
          clock_skew_seconds: CONTEXT_CLOCK_SKEW_SECONDS,
        },
        hint: "evidence cannot be retrieved after the decision it supports: fix the producer's clock, or evaluate at a time no earlier than the retrieval",
      },
    );
  }
  const authContext: JsonObject = { ...context.auth_context, [CONTEXT_AGE_KEY]: envelopeContextAgeSeconds(verified, now) };
  const refs = uniqueSorted(verified.records.map((r) => r.ref_id));
  return {
    intent: withEvidence(intent, verified.context_set_digest, verified.evidence_mode, refs, authContext),
    contextSource: CONTEXT_SOURCE_ENVELOPE,
  };
}

/**
 * Envelopes from parseContextEnvelope are frozen and already verified; anything else (a value
 * assembled by hand) is normalized again, as the reference does, so an unverified or edited
 * envelope can never be bound.
 */
function reverify(envelope: ContextEnvelope): ContextEnvelope {
  if (isVerifiedContextEnvelope(envelope)) return envelope;
  try {
    return normalizeContextEnvelope(envelope);
  } catch (err) {
    if (!isWardError(err)) throw err;
    throw bindingError(`verify context envelope: ${err.message}`);
  }
}

function bindingError(message: string): WardError {
  return new WardError(ERROR_CODES.ENVELOPE_BINDING, message);
}

function equalFold(a: string, b: string): boolean {
  return goLower(goTrim(a)) === goLower(goTrim(b));
}

/** auth_context without the age claim; undefined when nothing else is left. Unchanged input is reused. */
function withoutAge(auth: JsonObject | undefined): JsonObject | undefined {
  if (auth === undefined || !Object.hasOwn(auth, CONTEXT_AGE_KEY)) return auth;
  const { [CONTEXT_AGE_KEY]: _claim, ...rest } = auth;
  return Object.keys(rest).length === 0 ? undefined : rest;
}

function withEvidence(
  intent: NormalizedIntent,
  digest: string,
  mode: string,
  refs: string[],
  authContext: JsonObject | undefined,
): NormalizedIntent {
  const context: IntentContext = {
    ...intent.context,
    context_set_digest: digest,
    context_evidence_mode: mode,
    context_refs: refs,
    auth_context: authContext,
  };
  return { ...intent, context };
}
