import { Counter, Gauge, Histogram, LATENCY_BUCKETS, type Metric } from '../../telemetry/registry.js';
import type { MetricSnapshot } from '../../telemetry/metric-snapshot.js';
import { trackTelemetryLoss } from '../../telemetry/loss-gauge.js';
import type { TelemetryStats } from '../../telemetry/telemetry.js';

/**
 * What `ward mcp proxy --otel` counts, exported over OTLP only (the proxy has no `/metrics`
 * endpoint). The decision series share the daemon's names, so one dashboard reads both; the result
 * firewall's and the witness's are the proxy's own (docs/observability.md "Metrics").
 */
export class ProxyMetrics {
  readonly decisions = new Counter('ward_decisions_total', 'decisions returned, by verdict');
  readonly decisionReasons = new Counter('ward_decision_reasons_total', 'reason codes of the decisions returned, by verdict and reason (a decision with two codes counts under both)');
  readonly evalLatency = new Histogram('ward_eval_duration_seconds', 'time to decide (evaluate, post-process, sign), without the trace write', LATENCY_BUCKETS);
  readonly firewall = new Counter('ward_result_firewall_total', 'results screened by the result firewall, by action (pass, redact, block)');
  readonly firewallDetections = new Counter('ward_result_firewall_detections_total', 'detections in redacted or blocked results, by detector (names, never the matched text)');
  readonly witnessHits = new Counter('ward_witness_hits_total', 'decided requests with arguments carrying values of earlier tool results (the witness), by verdict');
  readonly telemetryLost = new Gauge('ward_telemetry_lost', 'telemetry not delivered since start, by what (as on the daemon)');

  private readonly all: Metric[] = [this.decisions, this.decisionReasons, this.evalLatency, this.firewall, this.firewallDetections, this.witnessHits, this.telemetryLost];

  constructor(stats: () => TelemetryStats) {
    trackTelemetryLoss(this.telemetryLost, stats);
  }

  /** One decided request: its verdict and reasons, how long deciding took, and whether the witness saw earlier results in its arguments. */
  decided(verdict: string, reasonCodes: readonly string[], seconds: number, witnessed: boolean): void {
    this.decisions.inc({ verdict });
    for (const reason of reasonCodes) this.decisionReasons.inc({ verdict, reason });
    this.evalLatency.observe(seconds);
    if (witnessed) this.witnessHits.inc({ verdict });
  }

  /** One result the firewall screened, and the detectors that fired. */
  screened(action: string, detectors: readonly string[]): void {
    this.firewall.inc({ action });
    for (const flagged of detectors) this.firewallDetections.inc({ detector: flagged.split(':')[0]! });
  }

  snapshot(): MetricSnapshot[] {
    return this.all.map((m) => m.snapshot());
  }
}
