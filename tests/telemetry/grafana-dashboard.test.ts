import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DaemonMetrics } from '../../src/daemon/metrics.js';
import { ProxyMetrics } from '../../src/mcp/proxy/metrics.js';
import { REPO } from '../cli/run.js';

// docs/grafana/ward-dashboard.json: every query names metrics Ward really exports (/metrics and
// OTLP carry the same names), so a renamed or removed metric breaks this test, not a dashboard.

interface Panel {
  type: string;
  title: string;
  targets?: { expr: string; refId: string }[];
}

const dashboard = JSON.parse(readFileSync(join(REPO, 'docs', 'grafana', 'ward-dashboard.json'), 'utf8')) as { uid: string; title: string; panels: Panel[]; templating: { list: { name: string }[] } };
const metrics = new DaemonMetrics();
metrics.clusterMetrics();
// The daemon's registry and the MCP proxy's (OTLP only; the names they share mean the same).
const proxy = new ProxyMetrics(() => ({ droppedSpans: 0, failedSpans: 0, droppedLogLines: 0, droppedLogRecords: 0, failedLogRecords: 0, failedMetricExports: 0 }));
const registry = new Map([...metrics.snapshot(), ...proxy.snapshot()].map((m) => [m.name, m.kind]));

/** The Ward series a PromQL expression reads, as the registry names them (a histogram's `_bucket`/`_sum`/`_count` → the histogram). */
function seriesOf(expr: string): { name: string; suffix: string }[] {
  return [...expr.matchAll(/\b(ward_[a-z0-9_]+)/g)].map(([, name]) => {
    const histogram = /^(.*)_(bucket|sum|count)$/.exec(name!);
    if (histogram && registry.get(histogram[1]!) === 'histogram') return { name: histogram[1]!, suffix: histogram[2]! };
    return { name: name!, suffix: '' };
  });
}

describe('the Grafana dashboard', () => {
  const panels = dashboard.panels.filter((p) => p.type !== 'row');

  it('is one importable dashboard with a data source and job variable', () => {
    expect(dashboard.uid).toBe('ward-overview');
    expect(dashboard.templating.list.map((v) => v.name)).toEqual(['datasource', 'job']);
    expect(panels.length).toBeGreaterThanOrEqual(10);
  });

  it('queries only metrics that exist in Ward\'s registry, each the way its kind is read', () => {
    for (const panel of panels) {
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets!) {
        const series = seriesOf(target.expr);
        expect(series.length, `${panel.title}: ${target.expr}`).toBeGreaterThan(0);
        for (const { name, suffix } of series) {
          const kind = registry.get(name);
          expect(kind, `${panel.title}: ${name} is not a Ward metric`).toBeDefined();
          if (kind === 'histogram') expect(suffix, `${panel.title}: ${name} is a histogram`).not.toBe('');
          // A counter is read as a rate or increase, never as a level.
          if (kind === 'counter') expect(target.expr, `${panel.title}: ${name}`).toMatch(new RegExp(`(rate|increase)\\(${name}\\b`));
        }
      }
    }
  });

  it('covers what issue 30 asks to see: decisions by verdict and reason, latency, trace commits, queue depth, refusals, firewall and witness hits', () => {
    const used = new Set(panels.flatMap((p) => p.targets!.flatMap((t) => seriesOf(t.expr).map((s) => s.name))));
    for (const name of ['ward_decisions_total', 'ward_decision_reasons_total', 'ward_eval_duration_seconds', 'ward_trace_write_duration_seconds', 'ward_trace_queue_depth', 'ward_http_rejected_total', 'ward_telemetry_lost', 'ward_result_firewall_total', 'ward_witness_hits_total']) {
      expect(used.has(name), name).toBe(true);
    }
  });
});
