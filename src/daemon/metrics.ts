import { Counter, decisionMetrics, Gauge, Histogram, LATENCY_BUCKETS, type Metric } from '../telemetry/registry.js';
import type { MetricSnapshot } from '../telemetry/metric-snapshot.js';

/** Everything the daemon counts. */
export class DaemonMetrics {
  readonly requests = new Counter('ward_http_requests_total', 'HTTP requests by route and status code');
  readonly rejected = new Counter('ward_http_rejected_total', 'requests refused before reaching a handler, by reason (auth, host, body_too_large, overload, draining, ...)');
  private readonly decisionSeries = decisionMetrics();
  readonly decisions = this.decisionSeries.decisions;
  readonly decisionReasons = this.decisionSeries.decisionReasons;
  readonly evalLatency = this.decisionSeries.evalLatency;
  readonly requestLatency = new Histogram('ward_http_request_duration_seconds', 'time from request to response for POST /v1/gate/eval', LATENCY_BUCKETS);
  readonly traceWriteLatency = new Histogram('ward_trace_write_duration_seconds', 'one group commit: the synchronized journal write of a group of traces (until it and every earlier group are durable)', LATENCY_BUCKETS);
  readonly traceBatchSize = new Histogram('ward_trace_batch_size', 'traces per group commit', [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]);
  readonly ingestLatency = new Histogram('ward_store_ingest_duration_seconds', 'one background ingestion of journaled records into the store (one synced batch)', LATENCY_BUCKETS);
  readonly ingestBacklog = new Gauge('ward_store_ingest_backlog', 'records durable in the journal and not yet indexed in the store');
  readonly traceWriteErrors = new Counter('ward_trace_write_errors_total', 'failed group commits (their requests got 503, nothing was returned as decided)');
  readonly storageErrors = new Counter('ward_storage_errors_total', 'writes that failed on a full or failing disk, by source (journal, ingest) and errno (ENOSPC, EDQUOT, EIO)');
  readonly storageFault = new Gauge('ward_storage_fault', '1 while a storage fault episode lasts (decisions refused with ERR_STORAGE_FULL), else 0');
  readonly queueDepth = new Gauge('ward_trace_queue_depth', 'decisions waiting for their trace to be durable');
  readonly queueCapacity = new Gauge('ward_trace_queue_capacity', 'decisions admitted at most before new ones get 503');
  readonly inFlight = new Gauge('ward_http_in_flight', 'requests being handled');
  readonly policyReloads = new Counter('ward_policy_reloads_total', 'policy reloads by result (ok, failed) and trigger (file, sighup, api)');
  readonly policyReloadFailing = new Gauge('ward_policy_reload_failing', '1 when the last reload failed and the previous policy is still served');
  readonly policyLoadedAt = new Gauge('ward_policy_loaded_timestamp_seconds', 'when the active policy was loaded');
  readonly ready = new Gauge('ward_ready', '1 when policy, store and key are loaded, the disk takes writes (no storage fault) and the daemon is not draining');
  // The console (src/daemon/console): the approvals inbox and the decision feed.
  readonly approvalsPending = new Gauge('ward_approvals_pending', 'decisions waiting for approval in the inbox');
  readonly approvalsResolved = new Counter('ward_approvals_resolved_total', 'inbox entries resolved in the console, by outcome (approved, denied)');
  readonly consoleRefusals = new Counter('ward_console_refusals_total', 'signed approvals and denials refused, by refusal code');
  readonly decisionStreams = new Gauge('ward_decision_streams', 'open GET /v1/decisions/stream connections');
  // PostgreSQL mode only (rendered once `clusterMetrics()` turned them on).
  readonly storeRoundTrips = new Counter('ward_store_round_trips_total', 'statements sent to PostgreSQL by this replica (each one network round trip), all callers');
  readonly storeUp = new Gauge('ward_store_up', '1 when the last PostgreSQL commit or probe succeeded');
  // --otel / --decision-log (docs/observability.md): what a slow or dead collector or log file cost, since start.
  readonly telemetryLost = new Gauge('ward_telemetry_lost', 'telemetry not delivered since start, by what: spans (export queue full), spans_failed (export failed), log_lines (decision log queue full or file failing), log_records and log_records_failed (OTLP decision log records), metric_exports_failed (OTLP metric exports that failed)');

  private readonly all: Metric[] = [
    this.requests,
    this.rejected,
    this.decisions,
    this.decisionReasons,
    this.evalLatency,
    this.requestLatency,
    this.traceWriteLatency,
    this.traceBatchSize,
    this.traceWriteErrors,
    this.storageErrors,
    this.storageFault,
    this.ingestLatency,
    this.ingestBacklog,
    this.queueDepth,
    this.queueCapacity,
    this.inFlight,
    this.policyReloads,
    this.policyReloadFailing,
    this.policyLoadedAt,
    this.ready,
    this.approvalsPending,
    this.approvalsResolved,
    this.consoleRefusals,
    this.decisionStreams,
    this.telemetryLost,
  ];

  /** Add the PostgreSQL series to /metrics (the single-node daemon does not show them). */
  clusterMetrics(): void {
    if (!this.all.includes(this.storeRoundTrips)) this.all.push(this.storeRoundTrips, this.storeUp);
  }

  render(): string {
    return this.all.map((m) => m.render()).join('\n') + '\n';
  }

  /** Every series `/metrics` shows, for the OTLP metrics export (same names, same values). */
  snapshot(): MetricSnapshot[] {
    return this.all.map((m) => m.snapshot());
  }
}
