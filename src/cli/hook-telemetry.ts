import { resolve } from 'node:path';
import { telemetryConfig } from '../telemetry/config.js';
import { serviceDecisionRecord, type ServiceDecided } from '../telemetry/gate-record.js';
import { startTelemetry } from '../telemetry/telemetry.js';
import type { CliContext } from './context.js';

/**
 * How long the command hook waits, after its reply is written, for its span and log record to
 * reach the collector. The host (Claude Code, Codex, ...) waits for the process to exit, so this
 * is the most the hook's telemetry adds to a call; what is not delivered by then is dropped.
 */
export const HOOK_FLUSH_MS = 300;

/**
 * `ward hook <host>` with `--otel` / `WARD_OTEL=1` (and `WARD_DECISION_LOG`): the decision's span
 * (child of the `TRACEPARENT` / `TRACESTATE` environment variables, the OpenTelemetry convention
 * for a process's parent context), log record and decision-log line, recorded after the reply was
 * written and flushed within `HOOK_FLUSH_MS`. The OpenTelemetry SDK is loaded here, only then.
 * Never throws: a collector that is down, or telemetry that cannot start, changes no decision and
 * no exit code (`exitCode`: the reply's, which the process ends with).
 */
export async function exportHookDecision(
  ctx: CliContext,
  flags: { otel?: string | undefined },
  operation: string,
  decided: ServiceDecided,
  times: { startedAt: number; decidedAt: number },
  exitCode: number,
): Promise<void> {
  try {
    const config = telemetryConfig({ otel: flags.otel !== undefined }, ctx.env);
    if (!config) return;
    // A process that lives for one decision has no series worth a metrics export (nor its SDK's load time).
    config.signals.metrics = undefined;
    if (config.decisionLog === '-') {
      // stdout carries the hook's reply.
      ctx.stderr('ward hook: WARD_DECISION_LOG=- ignored (stdout carries the reply); name a file\n');
      config.decisionLog = undefined;
    } else if (config.decisionLog !== undefined) config.decisionLog = resolve(ctx.cwd, config.decisionLog);
    const telemetry = await startTelemetry(config, 'hook');
    const parent = { traceparent: ctx.env['TRACEPARENT'], tracestate: ctx.env['TRACESTATE'] };
    const eventId = String(decided.trace['event_id'] ?? '');
    telemetry.decision(serviceDecisionRecord(decided, operation, eventId, telemetry.includeTargets, 'hook'), parent, times.startedAt, times.decidedAt);
    await telemetry.shutdown(HOOK_FLUSH_MS);
  } catch (err) {
    ctx.stderr(`ward hook: telemetry not exported: ${(err as Error).message}\n`);
  }
  // An exporter still retrying toward a dead collector holds the event loop (up to
  // OTEL_EXPORTER_OTLP_TIMEOUT): the process ends with the reply's exit code, whatever holds it.
  process.exitCode = exitCode;
  setTimeout(() => process.exit(exitCode), 20).unref();
}
