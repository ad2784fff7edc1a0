import { compareUtf8, formatRFC3339Nano, uniqueSorted } from '../../canon/index.js';
import { parseContextEnvelope, type ContextEnvelope } from '../../context/index.js';
import { evaluate } from '../../gate/evaluate.js';
import type { LoadedPolicy } from '../../policy/types.js';
import type { ChangeKind, NotReplayable, ReplayDecision, ReplayInput, ReplayRecord } from './types.js';

export const REPLAY_REPORT_SCHEMA = { id: 'ward.regress.replay', version: '1.0.0' } as const;

export interface ReplayOptions {
  candidate: LoadedPolicy;
  /** Evaluate this policy as the baseline instead of using the recorded decisions. */
  baseline?: LoadedPolicy | undefined;
  /** `--allow-loosening`: report loosened decisions without failing. */
  allowLoosening?: boolean | undefined;
}

export interface ReplayEntry {
  id: string;
  source: string;
  tool_name: string;
  evaluation_time: string;
  change: ChangeKind;
  baseline: ReplayDecision;
  candidate: ReplayDecision;
  reasons_added: string[];
  reasons_removed: string[];
  notes?: string[];
}

export interface ChangeCounts {
  replayed: number;
  unchanged: number;
  loosened: number;
  tightened: number;
  verdict_changed: number;
  reasons_changed: number;
  error: number;
}

export interface ReplayReport {
  schema_id: string;
  schema_version: string;
  status: 'pass' | 'fail';
  candidate_policy_digest: string;
  /** `recorded`, or the digest of `--baseline-policy`. */
  baseline: string;
  allow_loosening: boolean;
  summary: ChangeCounts & { records: number; not_replayable: number };
  /** `<from>-><to>` verdict transitions with counts. */
  transitions: Record<string, number>;
  by_tool: Record<string, ChangeCounts>;
  /** Keyed by the candidate's matched rule (`(default)` when no rule matched). */
  by_rule: Record<string, ChangeCounts>;
  /** Every record whose decision changed, in replay order. */
  changes: ReplayEntry[];
  not_replayable: NotReplayable[];
}

const NON_ALLOW = new Set(['block', 'require_approval', 'dry_run']);

/**
 * Codes the post-processing of a live decision adds (tokens, counters, simulate): the pure engine
 * never produces them, so they are left out of reason comparisons with recorded decisions.
 */
const POST_PROCESSING = /^(approval_|delegation_)|^(rate_limit_exceeded|destructive_budget_exceeded|simulate_mode_non_enforcing|simulated_block|simulated_require_approval|simulated_dry_run|broker_credential_missing|broker_credential_present)$/;
const RUNTIME_FORCED = ['rate_limit_exceeded', 'destructive_budget_exceeded'];

/**
 * Re-evaluate recorded intents under a candidate policy (pure: the policy engine only, each record
 * at its recorded `evaluation_time`, with its recorded context envelope) and compare with the
 * baseline: the recorded decision, or a baseline policy evaluated the same way. Same input, same
 * report, byte for byte.
 */
export function replayPolicy(input: ReplayInput, options: ReplayOptions): ReplayReport {
  const report: ReplayReport = {
    schema_id: REPLAY_REPORT_SCHEMA.id,
    schema_version: REPLAY_REPORT_SCHEMA.version,
    status: 'pass',
    candidate_policy_digest: options.candidate.digest,
    baseline: options.baseline ? options.baseline.digest : 'recorded',
    allow_loosening: options.allowLoosening === true,
    summary: { records: input.records.length + input.not_replayable.length, not_replayable: input.not_replayable.length, ...zero() },
    transitions: {},
    by_tool: {},
    by_rule: {},
    changes: [],
    not_replayable: input.not_replayable,
  };
  const envelopes = new Map<string, ContextEnvelope | Error>();
  for (const record of input.records) {
    const entry = replayOne(record, options, envelopes);
    count(report.summary, entry.change);
    count((report.by_tool[entry.tool_name] ??= zero()), entry.change);
    count((report.by_rule[entry.candidate.matched_rule || '(default)'] ??= zero()), entry.change);
    if (entry.change !== 'unchanged') {
      report.changes.push(entry);
      if (entry.baseline.verdict !== entry.candidate.verdict) {
        const key = `${entry.baseline.verdict}->${entry.candidate.verdict}`;
        report.transitions[key] = (report.transitions[key] ?? 0) + 1;
      }
    }
  }
  report.transitions = sorted(report.transitions);
  report.by_tool = sorted(report.by_tool);
  report.by_rule = sorted(report.by_rule);
  if (report.summary.loosened > 0 && !report.allow_loosening) report.status = 'fail';
  return report;
}

export function replayOne(record: ReplayRecord, options: ReplayOptions, envelopes = new Map<string, ContextEnvelope | Error>()): ReplayEntry {
  const notes: string[] = [];
  const candidate = decide(options.candidate, record, envelopes);
  let baseline: ReplayDecision;
  let compareCandidate = candidate.reason_codes;
  if (options.baseline) baseline = decide(options.baseline, record, envelopes);
  else if (record.recorded) {
    baseline = recordedPolicyDecision(record.recorded, notes);
    compareCandidate = candidate.reason_codes.filter((c) => !POST_PROCESSING.test(c));
  } else {
    baseline = { verdict: 'unknown', reason_codes: [], matched_rule: '' };
    notes.push('no recorded decision to compare with');
  }
  const added = compareCandidate.filter((c) => !baseline.reason_codes.includes(c));
  const removed = baseline.reason_codes.filter((c) => !compareCandidate.includes(c));
  const entry: ReplayEntry = {
    id: record.id,
    source: record.source,
    tool_name: record.tool_name,
    evaluation_time: formatRFC3339Nano(record.evaluation_time),
    change: classify(baseline, candidate, added.length + removed.length > 0),
    baseline,
    candidate,
    reasons_added: added,
    reasons_removed: removed,
  };
  if (notes.length > 0) entry.notes = notes;
  return entry;
}

function classify(baseline: ReplayDecision, candidate: ReplayDecision, reasonsDiffer: boolean): ChangeKind {
  if (candidate.error !== undefined || baseline.error !== undefined) return 'replay_evaluation_error';
  if (baseline.verdict === 'unknown') return 'unchanged';
  if (NON_ALLOW.has(baseline.verdict) && candidate.verdict === 'allow') return 'policy_loosened';
  if (baseline.verdict === 'allow' && NON_ALLOW.has(candidate.verdict)) return 'policy_tightened';
  if (baseline.verdict !== candidate.verdict) return 'verdict_changed';
  return reasonsDiffer ? 'reasons_changed' : 'unchanged';
}

/**
 * One policy's decision about a record: the pure engine at the recorded time with the recorded
 * envelope, plus the one deterministic post-processing step (no credential broker: a rule that
 * needs a brokered credential cannot allow). Evaluation errors are reported, not thrown.
 */
function decide(policy: LoadedPolicy, record: ReplayRecord, envelopes: Map<string, ContextEnvelope | Error>): ReplayDecision {
  try {
    let contextEnvelope: ContextEnvelope | undefined;
    if (record.context_envelope) {
      const text = JSON.stringify(record.context_envelope);
      let parsed = envelopes.get(text);
      if (parsed === undefined) {
        try {
          parsed = parseContextEnvelope(text);
        } catch (err) {
          parsed = err as Error;
        }
        envelopes.set(text, parsed);
      }
      if (parsed instanceof Error) throw parsed;
      contextEnvelope = parsed;
    }
    const now = record.evaluation_time;
    const outcome = evaluate(policy, record.intent, {
      now,
      contextNow: now,
      ...(contextEnvelope ? { contextEnvelope } : {}),
      // The recorded resolutions (a candidate policy that names more classes than the recorded one
      // judges the names it did not need resolved by their text, as a library caller does).
      ...(record.resolved_hosts ? { resolvedHosts: record.resolved_hosts } : {}),
    });
    let verdict: string = outcome.verdict;
    let reasons = outcome.reasonCodes;
    if (outcome.intentError === undefined && outcome.requireBrokerCredential && verdict === 'allow') {
      verdict = 'block';
      reasons = uniqueSorted([...reasons, 'broker_credential_required']);
    }
    return { verdict, reason_codes: reasons, matched_rule: outcome.matchedRule };
  } catch (err) {
    return { verdict: 'error', reason_codes: ['replay_evaluation_error'], matched_rule: '', error: (err as Error).message };
  }
}

/**
 * The policy's part of a recorded decision: simulate undone (the simulated verdict), an approval
 * that was granted counted as `require_approval` (approvals bind to the policy digest, so a new
 * policy needs new ones), post-processing codes left out. A block forced by a rate limit or budget
 * stays a block, with a note: what the policy said underneath was not recorded.
 */
function recordedPolicyDecision(recorded: NonNullable<ReplayRecord['recorded']>, notes: string[]): ReplayDecision {
  const codes = new Set(recorded.reason_codes);
  let verdict = recorded.verdict;
  if (codes.has('simulate_mode_non_enforcing')) {
    if (codes.has('simulated_block')) verdict = 'block';
    else if (codes.has('simulated_require_approval')) verdict = 'require_approval';
    notes.push('recorded with --simulate; compared as the simulated verdict');
  }
  if (codes.has('approval_granted')) {
    verdict = 'require_approval';
    notes.push('allowed by approval when recorded; compared as require_approval');
  }
  const forced = RUNTIME_FORCED.filter((c) => codes.has(c));
  if (forced.length > 0) notes.push(`recorded block forced by ${forced.join(', ')}; use --baseline-policy for an exact comparison`);
  if ([...codes].some((c) => c.startsWith('delegation_') && c !== 'delegation_granted') && verdict === 'block') {
    notes.push('recorded block forced by delegation; use --baseline-policy for an exact comparison');
  }
  return { verdict, reason_codes: [...codes].filter((c) => !POST_PROCESSING.test(c)).sort(compareUtf8), matched_rule: recorded.matched_rule };
}

function zero(): ChangeCounts {
  return { replayed: 0, unchanged: 0, loosened: 0, tightened: 0, verdict_changed: 0, reasons_changed: 0, error: 0 };
}

const COUNTER: Record<ChangeKind, Exclude<keyof ChangeCounts, 'replayed'>> = {
  policy_loosened: 'loosened',
  policy_tightened: 'tightened',
  verdict_changed: 'verdict_changed',
  reasons_changed: 'reasons_changed',
  replay_evaluation_error: 'error',
  unchanged: 'unchanged',
};

function count(c: ChangeCounts, kind: ChangeKind): void {
  c.replayed++;
  c[COUNTER[kind]]++;
}

function sorted<T>(obj: Record<string, T>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const key of Object.keys(obj).sort(compareUtf8)) out[key] = obj[key]!;
  return out;
}
