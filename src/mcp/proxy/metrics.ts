import { Counter, decisionMetrics, Gauge, type Metric } from '../../telemetry/registry.js';
import type { MetricSnapshot } from '../../telemetry/metric-snapshot.js';
import { trackTelemetryLoss } from '../../telemetry/loss-gauge.js';
import type { TelemetryStats } from '../../telemetry/telemetry.js';

/**
 * What `ward mcp proxy --otel` counts, exported over OTLP only (the proxy has no `/metrics`
 * endpoint). The decision series share the daemon's names, so one dashboard reads both; the result
 * firewall's and the witness's are the proxy's own (docs/observability.md "Metrics").
 */
export class ProxyMetrics {
  private readonly decisionSeries = decisionMetrics();
  readonly decisions = this.decisionSeries.decisions;
  readonly decisionReasons = this.decisionSeries.decisionReasons;
  readonly evalLatency = this.decisionSeries.evalLatency;
  readonly firewall = new Counter('ward_result_firewall_total', 'results screened by the result firewall, by action (pass, redact, block)');
  readonly firewallDetections = new Counter('ward_result_firewall_detections_total', 'detections in redacted or blocked results, by detector (names, never the matched text)');
  readonly witnessHits = new Counter('ward_witness_hits_total', 'decided requests with arguments carrying values of earlier tool results (the witness), by verdict');
  readonly refusals = new Counter('ward_mcp_refusals_total', 'client requests the proxy answered itself before any policy decision, by refusal (refusals.ts REFUSAL_CAUSES)');
  readonly telemetryLost = new Gauge('ward_telemetry_lost', 'telemetry not delivered since start, by what (as on the daemon)');

  private readonly all: Metric[] = [this.decisions, this.decisionReasons, this.evalLatency, this.firewall, this.firewallDetections, this.witnessHits, this.refusals, this.telemetryLost];

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

  /** One client request refused before any policy decision, by its cause. */
  refused(refusal: string): void {
    this.refusals.inc({ refusal });
  }

  snapshot(): MetricSnapshot[] {
    return this.all.map((m) => m.snapshot());
  }
}
