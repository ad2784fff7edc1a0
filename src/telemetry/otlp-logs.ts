import type { Context } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { OtlpProtocol } from './config.js';
import type { AttributeValue, DecisionRecord } from './decision-record.js';
import { budgetedExporter, type ExportBudget } from './export-budget.js';
import type { OtelModules } from './otel-modules.js';
import { logsExporter } from './otlp-exporters.js';

/** The event name of a decision's log record and of the proxy's span event (docs/observability.md). */
export const DECISION_EVENT = 'ward.decision';

// SeverityNumber of @opentelemetry/api-logs (not loaded for two numbers).
const INFO = 9;
const WARN = 13;

export interface DecisionLogRecords {
  /** Emit one decision as a log record, in `ctx`'s trace (Ward's span, else the caller's). Never waits. */
  emit(record: DecisionRecord, attributes: Readonly<Record<string, AttributeValue>>, ctx: Context, time: Date): void;
  shutdown(): Promise<void>;
}

/**
 * Decisions as OpenTelemetry log records, batched and exported over OTLP beside the span: the
 * span's attributes (so the signed trace's `ward.trace_id` and `ward.trace_path`), the trace and
 * span ids of the context, severity WARN for a block (what a SIEM alerts on), INFO otherwise.
 */
export function startLogsExport(m: OtelModules, resource: Resource, budget: ExportBudget, opts: { protocol: OtlpProtocol; delay: number; maxQueue: number }): DecisionLogRecords {
  const exporter = budgetedExporter(logsExporter(m, opts.protocol), budget);
  const processor = new m.logsSdk.BatchLogRecordProcessor({ exporter, maxQueueSize: opts.maxQueue, maxExportBatchSize: Math.min(512, opts.maxQueue), scheduledDelayMillis: opts.delay });
  const provider = new m.logsSdk.LoggerProvider({
    resource,
    processors: [
      {
        onEmit: (record) => {
          if (budget.admit()) processor.onEmit(record);
        },
        forceFlush: () => processor.forceFlush(),
        shutdown: () => processor.shutdown(),
      },
    ],
  });
  const logger = provider.getLogger('ward');
  return {
    emit(record, attributes, context, time) {
      const block = record.verdict === 'block';
      logger.emit({
        eventName: DECISION_EVENT,
        timestamp: time,
        severityNumber: block ? WARN : INFO,
        severityText: block ? 'WARN' : 'INFO',
        body: `${record.verdict} ${record.toolName}`,
        // Copied by the SDK's record (as the span copies them): one object serves both.
        attributes,
        context,
      });
    },
    shutdown: () => provider.shutdown(),
  };
}
