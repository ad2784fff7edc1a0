import type { JsonObject } from '../../canon/index.js';
import { approvalSessionBound } from '../../decision/approval-binding.js';
import { approvalTokensInDir } from '../../decision/approval-dir.js';
import type { LoadedPolicy } from '../../policy/types.js';
import type { NormalizedIntent } from '../../intent/types.js';
import type { VerifyKey } from '../../keys/index.js';
import type { GateService } from '../gate-service.js';
import type { DaemonMetrics } from '../metrics.js';
import type { Route } from '../routes.js';
import { approvalRoutes } from './approvals-routes.js';
import type { ApproverKeys } from './approvers.js';
import { decisionRoutes } from './decisions-routes.js';
import { DecisionFeed } from './feed.js';
import { entryFromIntent } from './entry.js';
import { ApprovalInbox } from './inbox.js';
import { storedTokens, type ConsoleParts } from './parts.js';
import { policyRoutes } from './policy-routes.js';
import { ConsoleSessions } from './session.js';
import { sessionRoutes } from './session-routes.js';

export { ApproverKeys } from './approvers.js';
export type { ConsoleParts } from './parts.js';

export interface ConsoleOptions {
  /** The policy in force (which rules bind approvals to the session). */
  policy: () => LoadedPolicy;
  stateDir: string;
  approvers: ApproverKeys;
  /** `--approval-public-key`: trusted for approvals besides the approvers list. */
  extraKeys: () => readonly VerifyKey[];
  /** `show`: argument values appear in the inbox; `redact` (default): only their digest. */
  approvalArgs?: 'redact' | 'show' | undefined;
  metrics: DaemonMetrics;
}

export interface AttachedConsole {
  parts: ConsoleParts;
  routes: Route[];
}

/**
 * The console's server side (issue 20): the approvals inbox, the live decision feed, the policy
 * view and change preview, and the browser session. Attaching hooks it into the decision path
 * (gate-service.ts `ConsoleHooks`); the routes are mounted beside the API's.
 */
export function attachConsole(gate: GateService, opts: ConsoleOptions): AttachedConsole {
  const inbox = new ApprovalInbox(opts.stateDir);
  const feed = new DecisionFeed();
  const closeListeners = new Set<() => void>();
  let closed = false;
  const showArgs = opts.approvalArgs === 'show';
  const parts: ConsoleParts = {
    inbox,
    showArgs,
    feed,
    approvers: opts.approvers,
    sessions: new ConsoleSessions(),
    metrics: opts.metrics,
    streams: { open: 0 },
    extraKeys: opts.extraKeys,
    tokensOf: storedTokens,
    close: () => {
      closed = true;
      for (const l of [...closeListeners]) l();
    },
    get closed() {
      return closed;
    },
    onClose: (l) => {
      closeListeners.add(l);
      return () => closeListeners.delete(l);
    },
  };
  opts.metrics.approvalsPending.track(() => inbox.pendingCount());
  opts.metrics.decisionStreams.track(() => parts.streams.open);
  inbox.subscribe((e) => {
    if (e.kind === 'approved' || e.kind === 'denied') opts.metrics.approvalsResolved.inc({ outcome: e.kind });
  });
  gate.console = {
    tokensFor: (intentDigest, policyDigest, callDigest) => inbox.dropExpired(approvalTokensInDir(inbox.dir, intentDigest, callDigest)).filter((t) => t.value['policy_digest'] === policyDigest),
    deniedFor: (intentDigest, policyDigest, callDigest) => inbox.deniedFor(intentDigest, policyDigest, callDigest),
    consumed: (ids) => inbox.consumed(ids),
    observe: (output, intent, raw) => {
      feed.publish(output, who(intent, raw));
      if (output['verdict'] === 'require_approval' && output['simulate_mode'] !== true && intent) inbox.add(pendingOf(output, intent, opts.policy(), showArgs));
    },
  };
  return { parts, routes: [...sessionRoutes(parts), ...approvalRoutes(parts), ...decisionRoutes(parts), ...policyRoutes(parts)] };
}

/** Who asked: from the normalized intent, or read leniently from the raw one when it did not normalize. */
function who(intent: NormalizedIntent | undefined, raw: unknown): { identity: string; agent_id: string; session_id: string; tool_name: string } {
  if (intent) return { identity: intent.context.identity, agent_id: intent.context.agent_id, session_id: intent.context.session_id, tool_name: intent.tool_name };
  const o = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const c = (typeof o['context'] === 'object' && o['context'] !== null ? o['context'] : {}) as Record<string, unknown>;
  const s = (v: unknown) => (typeof v === 'string' ? v.slice(0, 200) : '');
  return { identity: s(c['identity']), agent_id: s(c['agent_id']), session_id: s(c['session_id']), tool_name: s(o['tool_name']) };
}

/** A require_approval decision of this daemon, as the inbox shows it. */
function pendingOf(output: JsonObject, intent: NormalizedIntent, policy: LoadedPolicy, showArgs: boolean) {
  const required = output['required_approvals'];
  const rules = String(output['matched_rule'] ?? '').split(',').filter(Boolean);
  const verdict = {
    matchedRule: String(output['matched_rule'] ?? ''),
    reasonCodes: (output['reason_codes'] as string[] | undefined) ?? [],
    violations: (output['violations'] as string[] | undefined) ?? [],
    requiredApprovals: typeof required === 'number' && required > 0 ? required : 1,
    policyDigest: String(output['policy_digest']),
    traceId: String(output['trace_id'] ?? ''),
    // A policy reloaded since the decision cannot say: the approval then binds the session (the stricter).
    sessionBound: policy.digest !== output['policy_digest'] || approvalSessionBound(policy.policy, rules),
  };
  return entryFromIntent(intent, verdict, { source: 'daemon' }, showArgs);
}
