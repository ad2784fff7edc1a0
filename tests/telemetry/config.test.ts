import { describe, expect, it } from 'vitest';
import { telemetryConfig } from '../../src/telemetry/config.js';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decisionAttributes, decisionLogLine, targetStrings, type DecisionRecord } from '../../src/telemetry/decision-record.js';
import { startTelemetry } from '../../src/telemetry/telemetry.js';
import { mcpDecisionRecord, spanRpcId, withTraceContext } from '../../src/telemetry/mcp-record.js';

describe('telemetryConfig', () => {
  it('is off by default: no flag, no WARD_OTEL, no decision log', () => {
    expect(telemetryConfig({}, {})).toBeUndefined();
    expect(telemetryConfig({}, { WARD_OTEL: '0', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318' })).toBeUndefined();
  });

  it('turns on with --otel or WARD_OTEL=1, http/protobuf unless the standard variable says http/json', () => {
    expect(telemetryConfig({ otel: true }, {})).toMatchObject({ otlp: true, protocol: 'http/protobuf' });
    expect(telemetryConfig({}, { WARD_OTEL: '1', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toMatchObject({ otlp: true, protocol: 'http/json' });
    expect(telemetryConfig({}, { WARD_OTEL: 'true', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })?.protocol).toBe('http/protobuf');
    expect(telemetryConfig({}, { WARD_DECISION_LOG: 'd.jsonl' })).toMatchObject({ otlp: false, decisionLog: 'd.jsonl' });
  });

  it("exports traces, metrics and logs unless a signal's standard OTEL_<SIGNAL>_EXPORTER is none; each signal may pick its protocol", () => {
    expect(telemetryConfig({ otel: true }, {})).toMatchObject({ signals: { traces: true, metrics: 'http/protobuf', logs: 'http/protobuf' }, metricInterval: 60_000, metricTimeout: 30_000 });
    const some = telemetryConfig({ otel: true }, { OTEL_TRACES_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'otlp', OTEL_METRICS_EXPORTER: 'none', OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: 'http/json', OTEL_METRIC_EXPORT_INTERVAL: '5000' });
    expect(some).toMatchObject({ signals: { traces: false, metrics: undefined, logs: 'http/json' }, metricInterval: 5000 });
  });

  it('refuses what it cannot honour instead of exporting nothing', () => {
    expect(() => telemetryConfig({ otel: true }, { OTEL_METRICS_EXPORTER: 'prometheus' })).toThrow(/OTEL_METRICS_EXPORTER/);
    expect(() => telemetryConfig({ otel: true }, { OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'grpc' })).toThrow(/not supported/);
    expect(() => telemetryConfig({ otel: true }, { OTEL_METRIC_EXPORT_INTERVAL: '0' })).toThrow(/OTEL_METRIC_EXPORT_INTERVAL/);
    expect(() => telemetryConfig({ otel: true }, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/not supported/);
    expect(() => telemetryConfig({}, { WARD_OTEL: 'maybe' })).toThrow(/WARD_OTEL/);
    expect(() => telemetryConfig({ decisionLog: '' }, { WARD_OTEL: '1' })).toThrow(/decision-log/);
  });
});

describe('decision records', () => {
  const record: DecisionRecord = {
    host: 'mcp-proxy',
    operation: 'tools/call',
    mcpMethod: 'tools/call',
    toolName: 'echo',
    verdict: 'require_approval',
    reasonCodes: ['approval_required'],
    matchedRule: 'r',
    policyDigest: 'p'.repeat(64),
    intentDigest: 'i'.repeat(64),
    traceId: 't1',
    correlationId: 's:1',
    mcpSessionId: 's',
    jsonRpcId: '1',
    approval: 'required',
  };

  it('carry names, digests and codes under the documented keys', () => {
    expect(Object.keys(decisionAttributes(record)).sort()).toEqual(
      ['gen_ai.operation.name', 'gen_ai.tool.call.id', 'gen_ai.tool.name', 'jsonrpc.request.id', 'mcp.method.name', 'mcp.session.id', 'ward.approval', 'ward.host', 'ward.intent_digest', 'ward.matched_rule', 'ward.operation', 'ward.policy_digest', 'ward.reason_codes', 'ward.trace_id', 'ward.verdict'].sort(),
    );
    const line = JSON.parse(decisionLogLine(decisionAttributes(record), new Date('2026-01-02T03:04:05Z'), { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16) }));
    expect(line).toMatchObject({ schema: 'ward.decision_log/v1', time: '2026-01-02T03:04:05.000Z', 'ward.trace_id': 't1', 'otel.trace_id': 'a'.repeat(32), 'otel.span_id': 'b'.repeat(16) });
  });

  it('leave out a JSON-RPC id over 256 characters (the sender text at any length), and name the request by its session only', () => {
    const decided = { verdict: 'allow', reasonCodes: ['default_allow'], matchedRule: '', traceId: 't', intentDigest: 'i', policyDigest: 'p', toolName: 'echo' };
    const long = 'x'.repeat(257);
    const attrs = decisionAttributes(mcpDecisionRecord(decided, 's', long, `s:${long}`));
    expect(attrs['jsonrpc.request.id']).toBeUndefined();
    expect(attrs['gen_ai.tool.call.id']).toBe('s:-');
    expect(JSON.stringify(attrs)).not.toContain('xxxx');
    const short = decisionAttributes(mcpDecisionRecord(decided, 's', 'y'.repeat(256), `s:${'y'.repeat(256)}`));
    expect(short['jsonrpc.request.id']).toBe('y'.repeat(256));
    expect(spanRpcId(7)).toBe('7');
    expect(spanRpcId(null)).toBeUndefined();
  });

  it('propagate into a copy of the request: _meta keeps its other keys, the client message is unchanged', () => {
    const msg = { jsonrpc: '2.0', id: 1, params: { name: 'x', _meta: { progressToken: 3, traceparent: 'old', tracestate: 'old=1' } } };
    const out = withTraceContext(msg, { traceparent: '00-' + 'a'.repeat(32) + '-' + 'b'.repeat(16) + '-01' });
    expect(out.params._meta).toEqual({ progressToken: 3, traceparent: '00-' + 'a'.repeat(32) + '-' + 'b'.repeat(16) + '-01' });
    expect(msg.params._meta.traceparent).toBe('old');
  });
});

describe('canonical targets (--otel-targets, WARD_OTEL_TARGETS)', () => {
  const record: DecisionRecord = {
    host: 'serve',
    operation: 'gate.eval',
    toolName: 'fs.read_file',
    verdict: 'allow',
    reasonCodes: [],
    matchedRule: '',
    policyDigest: 'p',
    intentDigest: 'i',
    traceId: 't',
    correlationId: 'c',
    targets: targetStrings([{ kind: 'path', value: '/home/me/secret-plans.txt', operation: 'read' }, { kind: 'host' }, 'junk']),
  };

  it('are off unless asked for; an invalid switch refuses to start', () => {
    expect(telemetryConfig({ decisionLog: 'd' }, {})?.includeTargets).toBe(false);
    expect(telemetryConfig({ decisionLog: 'd', otelTargets: true }, {})?.includeTargets).toBe(true);
    expect(telemetryConfig({ decisionLog: 'd' }, { WARD_OTEL_TARGETS: '1' })?.includeTargets).toBe(true);
    expect(() => telemetryConfig({ decisionLog: 'd' }, { WARD_OTEL_TARGETS: 'yes please' })).toThrow(/WARD_OTEL_TARGETS/);
    expect(record.targets).toEqual(['path:/home/me/secret-plans.txt (read)']);
  });

  it('reach the decision log only when opted in, whatever the host passed', async () => {
    for (const otelTargets of [false, true]) {
      const file = join(mkdtempSync(join(tmpdir(), 'ward-otel-targets-')), 'd.jsonl');
      const telemetry = await startTelemetry(telemetryConfig({ decisionLog: file, otelTargets }, {})!, 'serve');
      expect(telemetry.includeTargets).toBe(otelTargets);
      telemetry.decision(record, undefined);
      await telemetry.shutdown();
      const text = readFileSync(file, 'utf8');
      expect((JSON.parse(text) as Record<string, unknown>)['ward.targets']).toEqual(otelTargets ? record.targets : undefined);
      expect(text.includes('secret-plans')).toBe(otelTargets);
    }
  });
});
