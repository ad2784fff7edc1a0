import { ERROR_CODES, WardError } from '../errors.js';

/** OTLP encodings Ward can export with (the official exporters it ships). */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/**
 * What telemetry a host runs (docs/observability.md). Endpoint, service name, resource attributes
 * and sampler are not copied here: the OpenTelemetry SDK reads its standard variables itself
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_SERVICE_NAME`,
 * `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER[_ARG]`), so Ward behaves as every other SDK user.
 */
export interface TelemetryConfig {
  /** Export over OTLP (`--otel`, `WARD_OTEL=1`). Off by default: no SDK is loaded. */
  otlp: boolean;
  /** The traces' protocol (`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`). */
  protocol: OtlpProtocol;
  /** Which signals go out with `otlp` (each on unless its `OTEL_<SIGNAL>_EXPORTER` is `none`), and their protocols. */
  signals: { traces: boolean; metrics: OtlpProtocol | undefined; logs: OtlpProtocol | undefined };
  /** `OTEL_METRIC_EXPORT_INTERVAL` / `OTEL_METRIC_EXPORT_TIMEOUT` (ms). */
  metricInterval: number;
  metricTimeout: number;
  /** `OTEL_BLRP_SCHEDULE_DELAY` (ms): how often decision log records are exported. */
  logDelay: number;
  /** `--decision-log` / `WARD_DECISION_LOG`: a file decisions are appended to as JSON lines; `-` is stdout. */
  decisionLog?: string | undefined;
  /** `--otel-targets` / `WARD_OTEL_TARGETS=1`: canonical targets in spans and logs (values: off by default). */
  includeTargets: boolean;
  /** Spans waiting for export at most (beyond: dropped and counted); also the decision log's line budget. */
  maxQueue: number;
}

export interface TelemetryFlags {
  otel?: boolean | undefined;
  otelTargets?: boolean | undefined;
  decisionLog?: string | undefined;
}

export const DEFAULT_MAX_QUEUE = 2048;

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['', '0', 'false', 'no', 'off']);

/**
 * The telemetry a host runs, from its flags and the environment. Invalid values refuse to start
 * (ERR_USAGE): a platform team that asked for export and gets silence would not know it.
 * Returns undefined when neither export nor a decision log is asked for.
 */
export function telemetryConfig(flags: TelemetryFlags, env: NodeJS.ProcessEnv = process.env): TelemetryConfig | undefined {
  const otlp = flags.otel === true || envSwitch(env, 'WARD_OTEL');
  const includeTargets = flags.otelTargets === true || envSwitch(env, 'WARD_OTEL_TARGETS');
  const decisionLog = flags.decisionLog ?? (env['WARD_DECISION_LOG'] || undefined);
  if (!otlp && decisionLog === undefined) return undefined;
  if (decisionLog === '') throw new WardError(ERROR_CODES.USAGE, '--decision-log needs a file name (or - for stdout)');
  const signals = {
    traces: exporterOn(env, 'TRACES'),
    metrics: exporterOn(env, 'METRICS') ? otlpProtocol(env, 'METRICS') : undefined,
    logs: exporterOn(env, 'LOGS') ? otlpProtocol(env, 'LOGS') : undefined,
  };
  return {
    otlp,
    protocol: otlpProtocol(env, 'TRACES'),
    signals,
    metricInterval: milliseconds(env, 'OTEL_METRIC_EXPORT_INTERVAL', 60_000),
    metricTimeout: milliseconds(env, 'OTEL_METRIC_EXPORT_TIMEOUT', 30_000),
    logDelay: milliseconds(env, 'OTEL_BLRP_SCHEDULE_DELAY', 1000),
    decisionLog,
    includeTargets,
    maxQueue: DEFAULT_MAX_QUEUE,
  };
}

function envSwitch(env: NodeJS.ProcessEnv, name: string): boolean {
  const value = (env[name] ?? '').trim().toLowerCase();
  if (!TRUE.has(value) && !FALSE.has(value)) throw new WardError(ERROR_CODES.USAGE, `${name} must be 1 or 0 (got ${JSON.stringify(env[name])})`);
  return TRUE.has(value);
}

/** `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` / `OTEL_LOGS_EXPORTER`: `otlp` (default) or `none`; Ward ships no other exporter. */
function exporterOn(env: NodeJS.ProcessEnv, signal: 'TRACES' | 'METRICS' | 'LOGS'): boolean {
  const name = `OTEL_${signal}_EXPORTER`;
  const value = (env[name] ?? '').trim();
  if (value === '' || value === 'otlp') return true;
  if (value === 'none') return false;
  throw new WardError(ERROR_CODES.USAGE, `${name} ${JSON.stringify(value)} is not supported`, { hint: 'use otlp (the default) or none' });
}

function milliseconds(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = (env[name] ?? '').trim();
  if (raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0) throw new WardError(ERROR_CODES.USAGE, `${name} must be a positive number of milliseconds (got ${JSON.stringify(raw)})`);
  return n;
}

function otlpProtocol(env: NodeJS.ProcessEnv, signal: 'TRACES' | 'METRICS' | 'LOGS'): OtlpProtocol {
  const value = (env[`OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`] || env['OTEL_EXPORTER_OTLP_PROTOCOL'] || 'http/protobuf').trim();
  if (value === 'http/protobuf' || value === 'http/json') return value;
  throw new WardError(ERROR_CODES.USAGE, `OTEL_EXPORTER_OTLP_PROTOCOL ${JSON.stringify(value)} is not supported`, {
    hint: 'Ward exports OTLP over HTTP: use http/protobuf (the default) or http/json; for gRPC, put an OpenTelemetry Collector in between',
  });
}
