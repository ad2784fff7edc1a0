import type * as Api from '@opentelemetry/api';
import type * as Core from '@opentelemetry/core';
import type * as Resources from '@opentelemetry/resources';
import type * as TraceSdk from '@opentelemetry/sdk-trace-base';
import type * as MetricsSdk from '@opentelemetry/sdk-metrics';
import type * as LogsSdk from '@opentelemetry/sdk-logs';
import type * as ExporterBase from '@opentelemetry/otlp-exporter-base';
import type * as ExporterHttp from '@opentelemetry/otlp-exporter-base/node-http';
import type * as Transformer from '@opentelemetry/otlp-transformer';

/**
 * The OpenTelemetry SDK modules, loaded by `telemetry.ts` (the one file that imports them, on
 * demand) and handed to the modules that build each signal. Types only here.
 */
export interface OtelModules {
  api: typeof Api;
  core: typeof Core;
  resources: typeof Resources;
  traceSdk: typeof TraceSdk;
  metricsSdk: typeof MetricsSdk;
  logsSdk: typeof LogsSdk;
  exporterBase: typeof ExporterBase;
  exporterHttp: typeof ExporterHttp;
  transformer: typeof Transformer;
}
