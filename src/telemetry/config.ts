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
  /** Export spans over OTLP (`--otel`, `WARD_OTEL=1`). Off by default: no SDK is loaded. */
  otlp: boolean;
  protocol: OtlpProtocol;
  /** `--decision-log` / `WARD_DECISION_LOG`: a file decisions are appended to as JSON lines; `-` is stdout. */
  decisionLog?: string | undefined;
  /** Spans waiting for export at most (beyond: dropped and counted); also the decision log's line budget. */
  maxQueue: number;
}

export interface TelemetryFlags {
  otel?: boolean | undefined;
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
  const switchValue = (env['WARD_OTEL'] ?? '').trim().toLowerCase();
  if (!TRUE.has(switchValue) && !FALSE.has(switchValue)) {
    throw new WardError(ERROR_CODES.USAGE, `WARD_OTEL must be 1 or 0 (got ${JSON.stringify(env['WARD_OTEL'])})`);
  }
  const otlp = flags.otel === true || TRUE.has(switchValue);
  const decisionLog = flags.decisionLog ?? (env['WARD_DECISION_LOG'] || undefined);
  if (!otlp && decisionLog === undefined) return undefined;
  if (decisionLog === '') throw new WardError(ERROR_CODES.USAGE, '--decision-log needs a file name (or - for stdout)');
  return { otlp, protocol: otlpProtocol(env), decisionLog, maxQueue: DEFAULT_MAX_QUEUE };
}

function otlpProtocol(env: NodeJS.ProcessEnv): OtlpProtocol {
  const value = (env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'] || env['OTEL_EXPORTER_OTLP_PROTOCOL'] || 'http/protobuf').trim();
  if (value === 'http/protobuf' || value === 'http/json') return value;
  throw new WardError(ERROR_CODES.USAGE, `OTEL_EXPORTER_OTLP_PROTOCOL ${JSON.stringify(value)} is not supported`, {
    hint: 'Ward exports OTLP over HTTP: use http/protobuf (the default) or http/json; for gRPC, put an OpenTelemetry Collector in between',
  });
}
