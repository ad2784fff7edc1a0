import { isJsonObject, isSha256Hex, uniqueSorted, type GoTime, type JsonValue } from '../../canon/index.js';
import { badRequest } from '../../edge/http-error.js';
import { approvalSessionBound } from '../../decision/approval-binding.js';
import { isWardError } from '../../errors.js';
import { evaluateNormalized } from '../../gate/evaluate.js';
import { argsDigest, intentDigest } from '../../intent/digest.js';
import { normalizeIntent } from '../../intent/normalize.js';
import type { NormalizedIntent } from '../../intent/types.js';
import type { LoadedPolicy } from '../../policy/types.js';
import { WARD_VERSION } from '../../version.js';
import { checkFields } from '../gate-body.js';
import { entryFromIntent } from './entry.js';
import type { NewEntry } from './inbox.js';
import { Refused } from './records.js';

/*
 * `POST /v1/approvals/pending`: a host that decided a call elsewhere (an MCP proxy) asks a person
 * here. The report carries the intent the reporter decided — the prepared intent, whose digest its
 * gate checks approval tokens against — and the policy digest it decided under. Everything the
 * inbox shows and the token binds is derived from that intent by this daemon: it normalizes it,
 * computes the digests, and evaluates it under its own policy for the rule and reasons. Digests,
 * a tool name or an argument digest sent beside the intent are only cross-checks: one that
 * disagrees with the intent refuses the report. (Before, the reporter's tool name, targets and
 * rule were stored as given beside the digests it named, so an agent holding the daemon's token
 * could have "GET …/health" approved for the digest of its own exfiltration call: issue 27.)
 */

const REPORT_FIELDS = new Set(['intent', 'policy_digest', 'intent_digest', 'tool_name', 'args_digest', 'trace_id', 'requested_at', 'reporter']);

/** The entry a report asks for, or a 400 (malformed) / 403 (`Refused`: disagrees with its intent or this policy). */
export function reportedEntry(value: JsonValue, policy: LoadedPolicy, showArgs: boolean, now: GoTime): NewEntry {
  const b = checkFields(value, REPORT_FIELDS, 'body');
  const raw = b['intent'];
  if (!isJsonObject(raw ?? null)) throw badRequest('body: intent is required: the gait.gate.intent_request the reporter decided (its prepared intent, argument values included)', 'the inbox shows and the token binds only what Ward derives from the intent itself');
  const text = (k: string, max: number): string => {
    const v = b[k];
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string' || v.length > max || /[\0-\x1f\x7f]/.test(v)) throw badRequest(`body: ${k} must be a string of at most ${max} characters without control characters`);
    return v;
  };
  const digest = (k: string): string => {
    const v = text(k, 64);
    if (v && !isSha256Hex(v)) throw badRequest(`body: ${k} must be sha256 hex (64 lowercase hex digits)`);
    return v;
  };
  const policyDigest = digest('policy_digest');
  if (!policyDigest) throw badRequest('body: policy_digest is required: the digest of the policy the reporter decided under');
  const requestedAt = text('requested_at', 40);
  if (requestedAt && Number.isNaN(Date.parse(requestedAt))) throw badRequest('body: requested_at must be an RFC 3339 time');

  let intent: NormalizedIntent;
  try {
    intent = normalizeIntent(raw);
  } catch (err) {
    if (isWardError(err)) throw badRequest(`body: intent: ${err.message}`);
    throw err;
  }
  const mismatch = [
    ['intent_digest', digest('intent_digest'), intentDigest(intent)],
    ['tool_name', text('tool_name', 200), intent.tool_name],
    ['args_digest', digest('args_digest'), argsDigest(intent)],
  ].filter(([, given, derived]) => given !== '' && given !== derived);
  if (mismatch.length > 0) {
    throw new Refused('approval_report_intent_mismatch', `the report's ${mismatch.map(([k]) => k).join(', ')} ${mismatch.length > 1 ? 'disagree' : 'disagrees'} with its intent: not entered`);
  }
  if (policyDigest !== policy.digest) {
    throw new Refused('approval_report_policy_mismatch', `the report was decided under policy ${policyDigest.slice(0, 12)}…, this daemon's policy is ${policy.digest.slice(0, 12)}…: run the reporter with the daemon's policy (an approver approves under the policy the console shows)`);
  }
  let outcome;
  try {
    outcome = evaluateNormalized(policy.policy, intent, { now, contextNow: now, producerVersion: WARD_VERSION });
  } catch (err) {
    if (isWardError(err)) throw badRequest(`body: intent: ${err.message}`);
    throw err;
  }
  if (outcome.verdict !== 'require_approval') {
    throw new Refused('approval_report_not_pending', `under this daemon's policy the call is ${outcome.verdict}${outcome.matchedRule ? ` (rule ${outcome.matchedRule})` : ''}, not require_approval: there is nothing to approve`);
  }
  return entryFromIntent(
    intent,
    {
      matchedRule: outcome.matchedRule,
      // The reporter asks because the call had no valid token: the codes its approval step gave.
      reasonCodes: uniqueSorted([...outcome.reasonCodes, 'approval_token_missing']),
      violations: uniqueSorted([...outcome.violations, 'approval_not_granted']),
      requiredApprovals: outcome.minApprovals,
      policyDigest: policy.digest,
      traceId: text('trace_id', 128),
      sessionBound: approvalSessionBound(policy.policy, outcome.matchedRules.map((r) => r.name)),
    },
    { source: 'reported', reporter: text('reporter', 200) || 'unnamed', ...(requestedAt ? { requestedAt: new Date(requestedAt).toISOString() } : {}) },
    showArgs,
  );
}
