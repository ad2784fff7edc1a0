import type { HistogramSeries, MetricSnapshot, ValueSeries } from './metric-snapshot.js';

/**
 * A small Prometheus registry (text exposition format 0.0.4): counters, gauges and histograms with
 * fixed label sets. No dependency. The daemon exposes its registry at `GET /metrics`; with `--otel`
 * the daemon's and the MCP proxy's series go out over OTLP (`snapshot()`, docs/observability.md).
 */

type Labels = Readonly<Record<string, string>>;

// Called on every decision (a counter's series): the common cases skip the sort and the replaces.
function labelKey(labels: Labels): string {
  const names = Object.keys(labels);
  if (names.length === 0) return '';
  if (names.length > 1) names.sort();
  return names.map((n) => `${n}="${escapeLabel(labels[n]!)}"`).join(',');
}

const NEEDS_ESCAPE = /[\\\n"]/;

function escapeLabel(value: string): string {
  if (!NEEDS_ESCAPE.test(value)) return value;
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function braces(key: string, extra = ''): string {
  const inner = [key, extra].filter((s) => s !== '').join(',');
  return inner === '' ? '' : `{${inner}}`;
}

export interface Metric {
  render(): string;
  snapshot(): MetricSnapshot;
}

export class Counter implements Metric {
  private readonly values = new Map<string, number>();
  private readonly labelsOf = new Map<string, Labels>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  inc(labels: Labels = {}, by = 1): void {
    const key = labelKey(labels);
    const was = this.values.get(key);
    if (was === undefined) this.labelsOf.set(key, { ...labels });
    this.values.set(key, (was ?? 0) + by);
  }

  get(labels: Labels = {}): number {
    return this.values.get(labelKey(labels)) ?? 0;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    if (this.values.size === 0) lines.push(`${this.name} 0`);
    for (const [key, value] of this.values) lines.push(`${this.name}${braces(key)} ${value}`);
    return lines.join('\n');
  }

  snapshot(): MetricSnapshot {
    const series: ValueSeries[] = [...this.values].map(([key, value]) => ({ labels: this.labelsOf.get(key) ?? {}, value }));
    return { name: this.name, description: this.help, kind: 'counter', series: series.length === 0 ? [{ labels: {}, value: 0 }] : series };
  }
}

export class Gauge implements Metric {
  private readonly values = new Map<string, { labels: Labels; read: () => number }>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  /** The value is read when /metrics is rendered. */
  track(read: () => number, labels: Labels = {}): void {
    this.values.set(labelKey(labels), { labels: { ...labels }, read });
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`];
    for (const [key, { read }] of this.values) lines.push(`${this.name}${braces(key)} ${read()}`);
    return lines.join('\n');
  }

  snapshot(): MetricSnapshot {
    return { name: this.name, description: this.help, kind: 'gauge', series: [...this.values.values()].map(({ labels, read }) => ({ labels, value: read() })) };
  }
}

/** Cumulative-bucket histogram; observations in seconds. */
export class Histogram implements Metric {
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[],
  ) {}

  observe(seconds: number, labels: Labels = {}): void {
    const key = labelKey(labels);
    let s = this.series.get(key);
    if (!s) {
      s = { labels: { ...labels }, counts: new Array<number>(this.buckets.length).fill(0), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    for (let i = 0; i < this.buckets.length; i++) {
      if (seconds <= this.buckets[i]!) {
        s.counts[i]!++;
        break;
      }
    }
    s.sum += seconds;
    s.count++;
  }

  count(labels: Labels = {}): number {
    return this.series.get(labelKey(labels))?.count ?? 0;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    const series = this.series.size === 0 ? new Map([['', { labels: {}, counts: this.buckets.map(() => 0), sum: 0, count: 0 }]]) : this.series;
    for (const [key, s] of series) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += s.counts[i]!;
        lines.push(`${this.name}_bucket${braces(key, `le="${le}"`)} ${cumulative}`);
      });
      lines.push(`${this.name}_bucket${braces(key, 'le="+Inf"')} ${s.count}`);
      lines.push(`${this.name}_sum${braces(key)} ${s.sum}`);
      lines.push(`${this.name}_count${braces(key)} ${s.count}`);
    }
    return lines.join('\n');
  }

  snapshot(): MetricSnapshot {
    const series: HistogramSeries[] = [...this.series.values()].map((s) => {
      // The bucket counts hold observations up to each bound; the rest went above the last bound.
      const inBounds = s.counts.reduce((a, b) => a + b, 0);
      return { labels: s.labels, counts: [...s.counts, s.count - inBounds], sum: s.sum, count: s.count };
    });
    return { name: this.name, description: this.help, kind: 'histogram', bounds: this.buckets, series };
  }
}

export const LATENCY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];


/**
 * The decision series the daemon (`/metrics` and OTLP) and the proxy (OTLP) both export: defined
 * once, so one dashboard reads both with the same names, help and buckets.
 */
export function decisionMetrics(): { decisions: Counter; decisionReasons: Counter; evalLatency: Histogram } {
  return {
    decisions: new Counter('ward_decisions_total', 'decisions returned, by verdict'),
    decisionReasons: new Counter('ward_decision_reasons_total', 'reason codes of the decisions returned, by verdict and reason (a decision with two codes counts under both)'),
    evalLatency: new Histogram('ward_eval_duration_seconds', 'time to decide (evaluate, post-process, sign), without the trace write', LATENCY_BUCKETS),
  };
}
