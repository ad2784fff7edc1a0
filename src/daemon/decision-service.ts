import { join, resolve } from 'node:path';
import { DecisionTraceWriter, type DecisionServiceConfig } from '../decision-service/evaluate.js';
import { checkEmergencyStop } from '../decision-service/job-state.js';
import { createEvaluateHandler, EVALUATE_ROUTES } from '../decision-service/http.js';
import { HOOK_HOSTS, type HookHost, type HookReply, type HostHookInput } from '../agent-hooks/index.js';
import { evaluateDecisionAsync, type DecisionResult } from '../decision-service/evaluate.js';
import { httpTraceCarrier, serviceDecisionRecord } from '../telemetry/gate-record.js';
import type { IncomingMessage } from 'node:http';
import { readBody } from '../edge/body.js';
import { sendJson } from './http.js';
import { withDeadline } from './pg-health.js';
import type { DaemonOptions } from './context.js';
import type { SigningKeyHolder } from './key-holder.js';
import type { PolicyHolder } from './policy-holder.js';
import type { Handler, Route } from './routes.js';
import type { KillSwitchInput } from '../decision/inputs.js';
import type { EmergencyStop } from '../decision/steps.js';
import type { SignedTrace } from '../trace/index.js';

/** What the cluster's control plane gives the decision service (`attachControlPlane`). */
export interface DecisionServiceControl {
  killSwitch: () => KillSwitchInput;
  emergencyStop: (jobId: string, fromFiles: (jobId: string) => EmergencyStop) => EmergencyStop;
}

/**
 * The decision service of each daemon, by its policy holder (the one object the daemon hands both
 * this module and the control plane): the control plane attaches after the routes exist.
 */
const services = new WeakMap<PolicyHolder, { config: DecisionServiceConfig }>();

/** Route the daemon's decision service through the cluster's kill switch and job controls. */
export function controlDecisionService(policies: PolicyHolder, control: DecisionServiceControl): void {
  const service = services.get(policies);
  if (!service) return;
  const jobRoot = resolve(service.config.cwd, service.config.jobRoot);
  service.config.killSwitchSource = control.killSwitch;
  service.config.emergencyStop = (jobId) => control.emergencyStop(jobId, (id) => checkEmergencyStop(jobRoot, id));
}

/**
 * The reference `mcp serve` decision service (`/v1/evaluate`, `/sse`, `/stream`) mounted in the
 * daemon, behind the daemon's own auth, Host guard, logging and metrics. It follows the daemon's
 * policy and key reloads; its traces are files in `<state>/traces`, ingested like any `gate eval`,
 * and on PostgreSQL also committed through `commit` before the answer.
 */
export function decisionServiceRoutes(
  opts: DaemonOptions,
  policies: PolicyHolder,
  keys: SigningKeyHolder,
  maxBodyBytes: number,
  commit?: (trace: SignedTrace) => Promise<unknown>,
): { routes: Route[]; close: () => Promise<void> } {
  const config: DecisionServiceConfig = {
    policy: policies.current,
    signingKey: keys.current,
    keyWarnings: opts.keyWarnings ?? [],
    profile: opts.profile ?? 'standard',
    defaultAdapter: 'mcp' as const,
    allowClientArtifactPaths: false,
    serve: true,
    jobRoot: join(opts.stateDir, 'jobs'),
    cwd: process.cwd(),
    stateDir: opts.stateDir,
    traceDir: join(opts.stateDir, 'traces'),
  };
  services.set(policies, { config });
  policies.onReload((result) => {
    if (result.ok) config.policy = policies.current;
  });
  keys.onReload(() => {
    config.signingKey = keys.current;
  });
  // On PostgreSQL the commit is bounded like a gate decision's (docs/cluster.md "Frozen database"):
  // past the bound the request fails with 503 instead of waiting on a frozen database.
  const bound = opts.postgres?.decisionTimeoutMs ?? 4500;
  const traceWriter = new DecisionTraceWriter(commit ? (trace) => withDeadline(commit(trace), bound, 'decision') : undefined);
  // One span and decision-log line per decision here too (`--otel`, docs/observability.md).
  const observe = (result: DecisionResult, req: IncomingMessage, operation: string, startedAt: number) =>
    opts.telemetry?.decision(serviceDecisionRecord(result, operation, String(result.trace['event_id'] ?? ''), opts.telemetry.includeTargets), httpTraceCarrier(req.headers), startedAt);
  const evaluate = createEvaluateHandler({ config, maxRequestBytes: maxBodyBytes, traceWriter, onDecision: (result, req, startedAt) => observe(result, req, 'evaluate', startedAt) });
  const handler: Handler = async (_ctx, ex) => {
    await evaluate(ex.req, ex.res);
    ex.status = ex.res.statusCode;
  };
  // A host's hook (Claude Code's `type: "http"`, the others through `curl … || exit 2`): the event
  // as the body, the command hook's JSON as the answer, after the trace is written. Every failure is
  // a deny in the event's shape, with 200: Claude Code treats a non-2xx answer as a non-blocking
  // error unless the hook says onFailure: block.
  const hostHook =
    (host: HookHost): Handler =>
    async (_ctx, ex) => {
      const startedAt = Date.now();
      let reply: HookReply;
      let input: HostHookInput | undefined;
      try {
        input = host.parseInput((await readBody(ex.req, maxBodyBytes)).toString('utf8'));
        if (input.kind === 'pass') reply = host.pass(input.event);
        else if (input.kind === 'fail') reply = host.fail(input.event, input.message);
        else {
          const result = await evaluateDecisionAsync(config, host.request(input.payload, {}), traceWriter);
          ex.verdict = result.verdict;
          observe(result, ex.req, `hook.${host.name}`, startedAt);
          reply = host.reply(input.event, result);
        }
      } catch (err) {
        reply = host.fail(input?.event, (err as Error).message);
      }
      ex.status = sendJson(ex.res, 200, host.httpBody(reply));
    };
  return {
    routes: [
      ...EVALUATE_ROUTES.map((path) => ({ name: path.slice(1).replaceAll('/', '.'), segments: path.slice(1).split('/'), methods: { POST: handler } })),
      ...HOOK_HOSTS.map((host) => ({ name: `v1.hooks.${host.name}`, segments: ['v1', 'hooks', host.name], methods: { POST: hostHook(host) } })),
    ],
    close: () => traceWriter.close(),
  };
}
