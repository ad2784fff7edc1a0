import { resolve } from 'node:path';
import { ERROR_CODES, WardError } from '../errors.js';
import { telemetryConfig } from '../telemetry/config.js';
import { startTelemetry, type DecisionTelemetry } from '../telemetry/telemetry.js';
import type { CliContext } from './context.js';

/**
 * `--otel` / `--decision-log` of a long-running host (`ward serve`, `ward mcp proxy`): the
 * telemetry it runs, or undefined when neither is asked for (then no OpenTelemetry module loads).
 * `stdoutFree`: whether `--decision-log -` may use stdout (not on the proxy's stdio transport).
 */
export async function startHostTelemetry(
  ctx: CliContext,
  flags: { otel?: boolean | undefined; otelTargets?: boolean | undefined; decisionLog?: string | undefined },
  host: 'serve' | 'mcp-proxy',
  stdoutFree = true,
): Promise<DecisionTelemetry | undefined> {
  const config = telemetryConfig(flags, ctx.env);
  if (!config) return undefined;
  if (config.decisionLog === '-' && !stdoutFree) {
    throw new WardError(ERROR_CODES.USAGE, '--decision-log -: stdout carries the MCP protocol here', { hint: 'name a file instead' });
  }
  if (config.decisionLog !== undefined && config.decisionLog !== '-') config.decisionLog = resolve(ctx.cwd, config.decisionLog);
  return startTelemetry(config, host, { thread: true });
}

/**
 * Stop a host's telemetry at exit: flush within `SHUTDOWN_FLUSH_MS`, then make sure an exporter
 * still retrying toward a dead collector (its retry timers hold the event loop for up to
 * OTEL_EXPORTER_OTLP_TIMEOUT) cannot keep the process alive: an unref'd timer fires only if
 * something else still holds the loop, and then ends the process with the exit code already set.
 */
export async function stopHostTelemetry(telemetry: DecisionTelemetry | undefined): Promise<void> {
  if (!telemetry) return;
  await telemetry.shutdown();
  setTimeout(() => process.exit(), EXIT_GRACE_MS).unref();
}

const EXIT_GRACE_MS = 250;
