import { readFileSync } from 'node:fs';
import { isWardError } from '../../errors.js';
import { badRequest, HttpError } from '../../edge/http-error.js';
import { policyCheck } from '../../policy/findings.js';
import { parsePolicyYaml } from '../../policy/load.js';
import { checkProfile } from '../../policy/profile.js';
import type { LoadedPolicy } from '../../policy/types.js';
import { recordFromCapture, replayPolicy, type ReplayEntry, type ReplayInput } from '../../regress/replay/index.js';
import type { DaemonContext } from '../context.js';
import { checkFields } from '../gate-body.js';
import { jsonBody, reply, type Handler, type Route } from '../routes.js';
import type { ConsoleParts } from './parts.js';

/*
 * The policy view and the change preview. The preview replays recorded decisions (decision
 * captures in the store: `ward serve --capture-intents`) under a candidate policy with the same
 * engine as `ward regress replay`, and returns what would change, loosenings first. It validates
 * the candidate exactly as a reload would and never activates anything.
 */

/** The policy's source text, when the file still holds the policy in force (for `ward check`'s text findings). */
function sourceText(ctx: DaemonContext): string | undefined {
  try {
    const text = readFileSync(ctx.policies.path, 'utf8');
    return parsePolicyYaml(text).digest === ctx.policies.current.digest ? text : undefined;
  } catch {
    return undefined;
  }
}

const view =
  (parts: ConsoleParts): Handler =>
  async (ctx, ex) => {
    const current = ctx.policies.current;
    const hits = parts.feed.ruleHits(current.digest);
    const status = ctx.policies.status();
    reply(ex, 200, {
      ok: true,
      policy_digest: current.digest,
      source: status.policy_source === 'published' ? 'published' : 'file',
      source_path: status.source_path,
      loaded_at: status.loaded_at,
      status,
      default_verdict: current.policy.default_verdict,
      hits_since: parts.feed.since.toISOString(),
      default_hits: hits.get('') ?? 0,
      rules: current.policy.rules.map((r) => ({
        name: r.name,
        priority: r.priority,
        effect: r.effect,
        min_approvals: r.min_approvals,
        require_distinct_approvers: r.require_distinct_approvers,
        reason_codes: r.reason_codes,
        hits: hits.get(r.name) ?? 0,
      })),
      ...policyCheck(current.policy, sourceText(ctx)),
    });
  };

const PREVIEW_FIELDS = new Set(['policy_yaml', 'since', 'until', 'tool', 'limit']);
const MAX_RECORDS = 5000;

/** Loosenings first (to allow first), then other verdict changes, tightenings, reason-only changes, errors. */
function rank(e: ReplayEntry): number {
  if (e.change === 'policy_loosened') return e.candidate.verdict === 'allow' ? 0 : 1;
  return { verdict_changed: 2, policy_tightened: 3, reasons_changed: 4, replay_evaluation_error: 5, unchanged: 6 }[e.change];
}

const preview =
  (_parts: ConsoleParts): Handler =>
  async (ctx, ex) => {
    const body = checkFields(await jsonBody(ctx, ex), PREVIEW_FIELDS, 'body');
    const text = body['policy_yaml'];
    if (typeof text !== 'string' || text.trim() === '') throw badRequest('body: policy_yaml must be the candidate policy YAML text');
    const opt = (k: string): string | undefined => {
      const v = body[k];
      if (v === undefined || v === null) return undefined;
      if (typeof v !== 'string' || v.length > 200) throw badRequest(`body: ${k} must be a string`);
      return v;
    };
    const limit = body['limit'] ?? 1000;
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_RECORDS) throw badRequest(`body: limit must be an integer from 1 to ${MAX_RECORDS}`);
    let candidate: LoadedPolicy;
    try {
      candidate = parsePolicyYaml(text);
      checkProfile(candidate.policy, ctx.options.profile ?? 'standard');
    } catch (err) {
      if (!isWardError(err)) throw err;
      throw new HttpError('bad_request', `candidate policy: ${err.message}`, { ...(err.hint ? { hint: err.hint } : {}), details: { policy_valid: false } });
    }
    await ctx.sink.caughtUp();
    const filter = { since: opt('since'), until: opt('until'), tool_name: opt('tool'), order: 'desc' as const, limit };
    let input: ReplayInput;
    try {
      input = await recordedDecisions(ctx, filter);
    } catch (err) {
      if (isWardError(err)) throw badRequest(`${err.message}: since and until are RFC 3339 times`);
      throw err;
    }
    const report = replayPolicy(input, { candidate, allowLoosening: true });
    const changes = [...report.changes].sort((a, b) => rank(a) - rank(b));
    reply(ex, 200, {
      ok: true,
      activated: false,
      current_policy_digest: ctx.policies.current.digest,
      candidate_policy_digest: candidate.digest,
      summary: report.summary,
      transitions: report.transitions,
      by_rule: report.by_rule,
      changes: changes.map((e) => ({
        id: e.id,
        tool_name: e.tool_name,
        evaluation_time: e.evaluation_time,
        change: e.change,
        from: e.baseline,
        to: e.candidate,
        reasons_added: e.reasons_added,
        reasons_removed: e.reasons_removed,
        trace_href: `/v1/decisions/${e.id}`,
        ...(e.notes ? { notes: e.notes } : {}),
      })),
      not_replayable: report.summary.not_replayable,
      ...policyCheck(candidate.policy, text),
      ...(report.summary.records === 0 ? { hint: 'no recorded decisions to replay: start ward serve with --capture-intents to keep each decision\'s intent for replay' } : {}),
    });
  };

/**
 * The newest recorded decisions: captures replay; traces in the same range without a capture are
 * counted as not replayable (traces keep digests, not intents).
 */
async function recordedDecisions(ctx: DaemonContext, filter: { since?: string | undefined; until?: string | undefined; tool_name?: string | undefined; order: 'desc'; limit: number }): Promise<ReplayInput> {
  const records: ReplayInput['records'] = [];
  const notReplayable: ReplayInput['not_replayable'] = [];
  const captured = new Set<string>();
  for (const entry of (await ctx.store.list({ ...filter, kind: 'capture' })).reverse()) {
    const r = recordFromCapture(await ctx.store.read(entry), `store:capture/${entry.id}`);
    captured.add(entry.id);
    if ('intent' in r) records.push(r);
    else notReplayable.push(r);
  }
  for (const entry of await ctx.store.list({ ...filter, kind: 'trace' })) {
    if (captured.has(entry.id)) continue;
    notReplayable.push({ id: entry.id, source: `store:trace/${entry.id}`, tool_name: entry.tool_names?.[0] ?? '', reason_code: 'not_replayable_no_capture', detail: 'no captured intent (ward serve --capture-intents)' });
  }
  return { records, not_replayable: notReplayable };
}

export function policyRoutes(parts: ConsoleParts): Route[] {
  return [
    { name: 'console.policy', segments: ['v1', 'console', 'policy'], methods: { GET: view(parts) }, console: true },
    { name: 'console.policy.preview', segments: ['v1', 'console', 'policy', 'preview'], methods: { POST: preview(parts) }, console: true },
  ];
}
