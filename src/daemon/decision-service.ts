import { join } from 'node:path';
import { DecisionTraceWriter } from '../mcp/service/evaluate.js';
import { createEvaluateHandler, EVALUATE_ROUTES } from '../mcp/service/http.js';
import type { DaemonOptions } from './context.js';
import type { SigningKeyHolder } from './key-holder.js';
import type { PolicyHolder } from './policy-holder.js';
import type { Handler, Route } from './routes.js';

/**
 * The reference `mcp serve` decision service (`/v1/evaluate`, `/sse`, `/stream`) mounted in the
 * daemon, behind the daemon's own auth, Host guard, logging and metrics. It follows the daemon's
 * policy and key reloads; its traces are files in `<state>/traces`, ingested like any `gate eval`.
 */
export function decisionServiceRoutes(
  opts: DaemonOptions,
  policies: PolicyHolder,
  keys: SigningKeyHolder,
  maxBodyBytes: number,
): { routes: Route[]; close: () => Promise<void> } {
  const config = {
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
  policies.onReload((result) => {
    if (result.ok) config.policy = policies.current;
  });
  keys.onReload(() => {
    config.signingKey = keys.current;
  });
  const traceWriter = new DecisionTraceWriter();
  const evaluate = createEvaluateHandler({ config, maxRequestBytes: maxBodyBytes, traceWriter });
  const handler: Handler = async (_ctx, ex) => {
    await evaluate(ex.req, ex.res);
    ex.status = ex.res.statusCode;
  };
  return {
    routes: EVALUATE_ROUTES.map((path) => ({ name: path.slice(1).replaceAll('/', '.'), segments: path.slice(1).split('/'), methods: { POST: handler } })),
    close: () => traceWriter.close(),
  };
}
