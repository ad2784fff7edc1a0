import type { JsonObject } from '../../canon/index.js';
import { approvalTokensInDir } from '../../decision/approval-dir.js';
import { argsDigest, delegationDigest } from '../../intent/digest.js';
import type { NormalizedIntent } from '../../intent/types.js';
import { approvalOpCount, approvalTargetCount, requiredApprovalScope } from '../../tokens/index.js';
import { uniqueSortedLower } from '../../canon/index.js';
import type { VerifyKey } from '../../keys/index.js';
import type { GateService } from '../gate-service.js';
import type { DaemonMetrics } from '../metrics.js';
import type { Route } from '../routes.js';
import { approvalRoutes } from './approvals-routes.js';
import type { ApproverKeys } from './approvers.js';
import { decisionRoutes } from './decisions-routes.js';
import { DecisionFeed } from './feed.js';
import { ApprovalInbox, type ArgsView } from './inbox.js';
import { storedTokens, type ConsoleParts } from './parts.js';
import { policyRoutes } from './policy-routes.js';
import { ConsoleSessions } from './session.js';
import { sessionRoutes } from './session-routes.js';

export { ApproverKeys } from './approvers.js';
export type { ConsoleParts } from './parts.js';

export interface ConsoleOptions {
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
  const parts: ConsoleParts = {
    inbox,
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
  const showArgs = opts.approvalArgs === 'show';
  gate.console = {
    tokensFor: (intentDigest, policyDigest) => inbox.dropExpired(approvalTokensInDir(inbox.dir, intentDigest)).filter((t) => t.value['policy_digest'] === policyDigest),
    deniedFor: (intentDigest, policyDigest) => inbox.deniedFor(intentDigest, policyDigest),
    consumed: (ids) => inbox.consumed(ids),
    observe: (output, intent, raw) => {
      feed.publish(output, who(intent, raw));
      if (output['verdict'] === 'require_approval' && output['simulate_mode'] !== true && intent) inbox.add(pendingOf(output, intent, showArgs));
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

function pendingOf(output: JsonObject, intent: NormalizedIntent, showArgs: boolean) {
  const args: ArgsView = showArgs ? { redacted: false, args_digest: argsDigest(intent), values: intent.args } : { redacted: true, args_digest: argsDigest(intent) };
  const required = output['required_approvals'];
  return {
    source: 'daemon' as const,
    tool_name: intent.tool_name,
    targets: intent.targets.map((t) => ({ kind: t.kind, value: t.value, operation: t.operation, endpoint_class: t.endpoint_class, endpoint_domain: t.endpoint_domain, sensitivity: t.sensitivity, destructive: t.destructive })),
    matched_rule: String(output['matched_rule'] ?? ''),
    reason_codes: (output['reason_codes'] as string[] | undefined) ?? [],
    violations: (output['violations'] as string[] | undefined) ?? [],
    identity: intent.context.identity,
    agent_id: intent.context.agent_id,
    session_id: intent.context.session_id,
    requested_at: new Date().toISOString(),
    intent_digest: String(output['intent_digest']),
    policy_digest: String(output['policy_digest']),
    delegation_binding_digest: intent.delegation ? delegationDigest(intent.delegation) : '',
    trace_id: String(output['trace_id'] ?? ''),
    required_scope: uniqueSortedLower(requiredApprovalScope(intent)),
    required_approvals: typeof required === 'number' && required > 0 ? required : 1,
    max_targets: approvalTargetCount(intent),
    max_ops: approvalOpCount(intent),
    target_count: approvalTargetCount(intent),
    op_count: approvalOpCount(intent),
    args,
  };
}
