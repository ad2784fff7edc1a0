import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, tempDir, ward, WARD as WARD_BIN } from '../cli/run.js';
import { POLICY, RawProxy, startListening, stopListeners, writePolicy } from '../mcp/proxy/helpers.js';
import { exportingTo, startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';

// `ward mcp proxy --otel` against a real OTLP/HTTP receiver, with a stub MCP server that records
// every line it receives (docs/observability.md).

const RECORDER = join(REPO, 'tests', 'mcp', 'proxy', 'recording-server.mjs');
const SECRET = 'SECRET-ARG-VALUE-91c2e4';
const PARENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const PARENT_SPAN = 'b7ad6b7169203331';

let receiver: OtlpReceiver;
let proxy: RawProxy;
let cwd: string;
let serverLog: string;
let decisionLog: string;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  cwd = tempDir('ward-otel-proxy-');
  // The result firewall on: a social security number in a result is redacted.
  writePolicy(cwd, `${POLICY}results:\n  pii: { action: redact, patterns: [{ name: ssn, regex: '\\b\\d{3}-\\d{2}-\\d{4}\\b' }] }\n`);
  serverLog = join(cwd, 'server.log');
  decisionLog = join(cwd, 'decisions.jsonl');
  proxy = new RawProxy(['--policy', 'policy.yaml', '--otel', '--decision-log', 'decisions.jsonl', '--workspace', '.'], [process.execPath, RECORDER], cwd, {
    RECORDING_SERVER_LOG: serverLog,
    ...exportingTo(receiver),
    OTEL_METRIC_EXPORT_INTERVAL: '200',
  });
  await proxy.initialize();
}, 30_000);

afterAll(async () => {
  proxy?.end();
  await proxy?.exited;
  await receiver?.close();
});

/** The span of the request with this JSON-RPC id, once exported (not a relayed request's, nor its result firewall decision's). */
async function spanOf(id: string) {
  const find = () => receiver.spans.find((s) => s.attributes['jsonrpc.request.id'] === id && s.attributes['ward.operation'] !== 'relay' && s.attributes['ward.operation'] !== 'result_firewall');
  await receiver.waitFor(() => find() !== undefined, `the span of request ${id}`);
  return find()!;
}

const received = () => (existsSync(serverLog) ? readFileSync(serverLog, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { method?: string; id?: unknown; params?: any }) : []);

describe('ward mcp proxy --otel', () => {
  it('exports a tools/call span, child of _meta.traceparent, and forwards the call with Ward\'s span as the server\'s parent', async () => {
    proxy.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { text: SECRET }, _meta: { traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-01`, tracestate: 'vendor=1', progressToken: 'p1' } } });
    const res = await proxy.response(7);
    expect(JSON.stringify(res['result'])).toContain(SECRET); // the call really went through
    const span = await spanOf('7');
    expect(span.name).toBe('tools/call echo');
    expect(span.kind).toBe('SPAN_KIND_CLIENT');
    expect(span.traceId).toBe(PARENT_TRACE);
    expect(span.parentSpanId).toBe(PARENT_SPAN);
    expect(span.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'echo',
      'ward.host': 'mcp-proxy',
      'ward.verdict': 'allow',
    });
    expect(span.attributes['mcp.session.id']).toEqual(expect.any(String));
    expect(span.attributes['ward.trace_id']).toMatch(/^[0-9a-f]+$/);
    // What the server received: the client's call, with Ward's span as the parent in _meta.
    const forwarded = received().find((m) => m.method === 'tools/call' && m.id === 7)!;
    expect(forwarded.params.arguments).toEqual({ text: SECRET });
    expect(forwarded.params._meta.traceparent).toBe(`00-${PARENT_TRACE}-${span.spanId}-01`);
    expect(forwarded.params._meta.tracestate).toBe('vendor=1');
    expect(forwarded.params._meta.progressToken).toBe('p1');
  });

  it('traces a blocked call without forwarding it, and never exports an argument value', async () => {
    proxy.call(8, 'write_file', { path: 'x.txt', content: SECRET });
    const res = await proxy.response(8);
    expect(JSON.stringify(res)).toMatch(/block/i);
    const span = await spanOf('8');
    expect(span.attributes['ward.verdict']).toBe('block');
    expect(span.attributes['ward.matched_rule']).toBe('block-writes');
    expect(span.parentSpanId).toBe(''); // no traceparent in the request: a new trace
    expect(received().some((m) => m.id === 8)).toBe(false);
    const exported = Buffer.concat(receiver.bodies);
    expect(exported.includes(SECRET)).toBe(false);
    expect(exported.includes('x.txt')).toBe(false);
    expect(exported.includes('block-writes')).toBe(true);
  });

  it('appends a decision-log line per call, naming the signed trace (which verifies)', async () => {
    let lines: Record<string, unknown>[] = [];
    for (let i = 0; i < 50 && lines.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 100));
      lines = existsSync(decisionLog) ? readFileSync(decisionLog, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) : [];
    }
    expect(lines.map((l) => [l['jsonrpc.request.id'], l['ward.verdict']])).toEqual([['7', 'allow'], ['8', 'block']]);
    expect(lines[0]!['otel.trace_id']).toBe(PARENT_TRACE);
    expect(readFileSync(decisionLog, 'utf8').includes(SECRET)).toBe(false);
    const verified = ward(['trace', 'verify', join('.ward', 'traces'), '--json'], { cwd });
    expect(verified.code).toBe(0);
    const dir = join(cwd, '.ward', 'traces');
    const traces = readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as Record<string, unknown>);
    const traced = traces.find((t) => t['trace_id'] === lines[1]!['ward.trace_id'])!;
    expect(traced['verdict']).toBe('block');
    expect(traced['intent_digest']).toBe(lines[1]!['ward.intent_digest']);
  });

  it('exports each call as an OTLP log record in its span, with the span attributes and no argument value', async () => {
    await receiver.waitFor(() => receiver.logs.length >= 2, 'two log records');
    expect(receiver.logs.map((l) => [l.attributes['jsonrpc.request.id'], l.attributes['ward.verdict'], l.eventName])).toEqual([
      ['7', 'allow', 'ward.decision'],
      ['8', 'block', 'ward.decision'],
    ]);
    for (const record of receiver.logs) {
      const span = receiver.spans.find((s) => s.attributes['jsonrpc.request.id'] === record.attributes['jsonrpc.request.id'])!;
      expect([record.traceId, record.spanId]).toEqual([span.traceId, span.spanId]);
      // The span's end may add what the answer was (error.type); the decision's attributes are the same.
      expect(span.attributes).toMatchObject(record.attributes);
    }
    expect(receiver.logs[0]!.traceId).toBe(PARENT_TRACE);
    expect(Buffer.concat(receiver.bodies).includes(SECRET)).toBe(false);
  });

  it('gives every relayed request a span: a decided resources/read (with its trace file) and a plain ping, both passing their context on', async () => {
    const tp = (span: string) => ({ traceparent: `00-${PARENT_TRACE}-${span}-01` });
    proxy.send({ jsonrpc: '2.0', id: 20, method: 'resources/read', params: { uri: `file:///notes/${SECRET}.txt`, _meta: tp(PARENT_SPAN) } });
    proxy.send({ jsonrpc: '2.0', id: 21, method: 'ping', params: { _meta: tp(PARENT_SPAN) } });
    await Promise.all([proxy.response(20), proxy.response(21)]);
    await receiver.waitFor(() => ['20', '21'].every((id) => receiver.spans.some((s) => s.attributes['jsonrpc.request.id'] === id)), 'the two spans');
    const span = (id: string) => receiver.spans.find((s) => s.attributes['jsonrpc.request.id'] === id)!;
    const read = span('20');
    expect(read.name).toBe('resources/read');
    expect(read.attributes).toMatchObject({ 'mcp.method.name': 'resources/read', 'ward.verdict': 'allow', 'ward.host': 'mcp-proxy' });
    expect('gen_ai.operation.name' in read.attributes).toBe(false); // reading a resource is not executing a tool
    const ping = span('21');
    expect(ping.name).toBe('ping');
    expect(ping.attributes).toMatchObject({ 'mcp.method.name': 'ping', 'ward.operation': 'relay' });
    expect('ward.verdict' in ping.attributes).toBe(false);
    for (const [id, s] of [[20, read], [21, ping]] as const) {
      expect([s.traceId, s.parentSpanId, s.kind]).toEqual([PARENT_TRACE, PARENT_SPAN, 'SPAN_KIND_CLIENT']);
      const forwarded = received().find((m) => m.id === id)!;
      expect(forwarded.params._meta.traceparent).toBe(`00-${PARENT_TRACE}-${s.spanId}-01`);
    }
    // The decided request names its signed trace file, which exists once durable.
    const path = String(read.attributes['ward.trace_path']);
    expect(path.startsWith(join(cwd, '.ward', 'traces'))).toBe(true);
    for (let i = 0; i < 50 && !existsSync(path); i++) await new Promise((r) => setTimeout(r, 100));
    expect((JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>)['trace_id']).toBe(read.attributes['ward.trace_id']);
    expect(Buffer.concat(receiver.bodies).includes(SECRET)).toBe(false);
  });

  it('exports the proxy\'s metrics over OTLP: decisions by verdict and reason, result firewall screenings, witness hits', async () => {
    // A value the server showed the model, then sent back as an argument: the witness sees it.
    const token = 'tok_7Kq9Zx2Lm4Np8Rs6Vw';
    proxy.call(30, 'echo', { text: token });
    await proxy.response(30);
    proxy.call(31, 'echo', { text: token });
    await proxy.response(31);
    const latest = (name: string, labels: Record<string, string>) =>
      receiver.points.filter((p) => p.name === name && Object.entries(labels).every(([k, v]) => p.attributes[k] === v)).at(-1)?.value ?? 0;
    // Witnessed so far: call 8 (block) carried SECRET, which call 7's result showed; call 20's URI
    // (allow) too; and call 31 (allow) carries the token call 30's result showed.
    await receiver.waitFor(() => latest('ward_witness_hits_total', { verdict: 'allow' }) === 2, 'the proxy metrics after call 31');
    const span = await spanOf('31');
    expect(span.attributes['ward.witness.arguments']).toBe(1);
    expect(span.attributes['ward.witness.source_trace_ids']).toEqual([(await spanOf('30')).attributes['ward.trace_id']]);
    expect((await spanOf('30')).attributes['ward.witness.arguments']).toBe(0);
    expect(latest('ward_witness_hits_total', { verdict: 'block' })).toBe(1);
    expect((await spanOf('8')).attributes['ward.witness.arguments']).toBe(1);
    expect(latest('ward_decision_reasons_total', { verdict: 'block', reason: 'matched_rule_block_writes' })).toBe(1);
    // Every forwarded result is screened; one with a number the pii detector knows is redacted, under a span of its own.
    proxy.call(32, 'echo', { text: 'ssn 123-45-6789' });
    const redacted = await proxy.response(32);
    expect(JSON.stringify(redacted)).toContain('[REDACTED:pii');
    await receiver.waitFor(() => latest('ward_result_firewall_total', { action: 'redact' }) === 1, 'the redaction counted');
    expect(latest('ward_result_firewall_total', { action: 'pass' })).toBeGreaterThanOrEqual(3);
    expect(latest('ward_result_firewall_detections_total', { detector: 'pii' })).toBe(1);
    await receiver.waitFor(() => receiver.spans.some((s) => s.attributes['ward.operation'] === 'result_firewall'), 'the result firewall span');
    const firewall = receiver.spans.find((s) => s.attributes['ward.operation'] === 'result_firewall')!;
    const call = await spanOf('32');
    expect(firewall.name).toBe('ward.result_firewall echo');
    expect([firewall.traceId, firewall.parentSpanId]).toEqual([call.traceId, call.spanId]);
    expect(firewall.attributes).toMatchObject({ 'ward.firewall.action': 'redact', 'ward.firewall.detectors': ['pii:ssn'], 'ward.verdict': 'allow' });
    expect(Buffer.concat(receiver.bodies).includes('123-45-6789')).toBe(false);
    expect(receiver.points.find((p) => p.name === 'ward_eval_duration_seconds')?.kind).toBe('histogram');
    expect(receiver.points.find((p) => p.name === 'ward_decisions_total')?.resource['ward.host']).toBe('mcp-proxy');
  });

  it('keeps a request\'s span open until the answer reaches the client: the server\'s answer falls inside it, the decision is an event in it', async () => {
    proxy.send({ jsonrpc: '2.0', id: 40, method: 'tools/call', params: { name: 'echo', arguments: { text: 'slow', delay_ms: 150 }, _meta: { traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-01` } } });
    const res = await proxy.response(40);
    const answeredAt = (res['result'] as { _meta: { answered_at_ms: number } })._meta.answered_at_ms;
    const span = await spanOf('40');
    expect([span.traceId, span.parentSpanId, span.status]).toEqual([PARENT_TRACE, PARENT_SPAN, '']);
    // The server's work (its spans' parent is this span, through _meta) lies within Ward's span.
    expect(received().find((m) => m.id === 40)!.params._meta.traceparent).toBe(`00-${PARENT_TRACE}-${span.spanId}-01`);
    expect(span.endMs).toBeGreaterThanOrEqual(answeredAt);
    expect(span.endMs - span.startMs).toBeGreaterThanOrEqual(150);
    const decided = span.events.filter((e) => e.name === 'ward.decision');
    expect(decided).toHaveLength(1);
    expect(decided[0]!.timeMs).toBeGreaterThanOrEqual(span.startMs);
    expect(decided[0]!.timeMs).toBeLessThan(answeredAt - 100); // decided before forwarding; the server waited 150 ms after
  });

  it('ends the span of a cancelled request once, as cancelled', async () => {
    proxy.send({ jsonrpc: '2.0', id: 41, method: 'tools/call', params: { name: 'echo', arguments: { text: 'cancel me', delay_ms: 200 } } });
    for (let i = 0; i < 50 && !received().some((m) => m.id === 41); i++) await new Promise((r) => setTimeout(r, 50));
    proxy.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 41, reason: 'test' } });
    const span = await spanOf('41');
    expect(span.attributes['error.type']).toBe('cancelled');
    expect(span.status).toBe('STATUS_CODE_ERROR');
    // The server's late answer (dropped by Ward) ends nothing more.
    await new Promise((r) => setTimeout(r, 400));
    expect(receiver.spans.filter((s) => s.attributes['jsonrpc.request.id'] === '41')).toHaveLength(1);
  });

  it('ends the span of a request still unanswered when its session ends', async () => {
    const log = join(cwd, 'server-2.log');
    const other = new RawProxy(['--policy', 'policy.yaml', '--otel', '--workspace', '.'], [process.execPath, RECORDER], cwd, {
      RECORDING_SERVER_LOG: log,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '50',
    });
    await other.initialize();
    other.send({ jsonrpc: '2.0', id: 'unanswered', method: 'tools/call', params: { name: 'echo', arguments: { text: 'never', delay_ms: 60_000 } } });
    for (let i = 0; i < 50 && !(existsSync(log) && readFileSync(log, 'utf8').includes('"unanswered"')); i++) await new Promise((r) => setTimeout(r, 50));
    other.end();
    await other.exited;
    const span = await spanOf('unanswered');
    expect(span.attributes['error.type']).toBe('session_ended');
    expect(span.status).toBe('STATUS_CODE_ERROR');
  });

  it('gives a refusal before policy a span of its own: over a limit, a reused id, an unknown method (with its signed trace)', async () => {
    const METHOD_TEXT = 'agent-invented-method-5b1d';
    const tp = `00-${PARENT_TRACE}-${PARENT_SPAN}-01`;
    const refusedSpan = (id: string) => receiver.spans.find((s) => s.attributes['jsonrpc.request.id'] === id && s.attributes['ward.operation'] === 'refused');
    // Over --max-call-keys (2,048 by default): refused unread, an argument value inside.
    const many = Object.fromEntries(Array.from({ length: 2100 }, (_, i) => [`k${i}`, SECRET]));
    proxy.send({ jsonrpc: '2.0', id: 50, method: 'tools/call', params: { name: 'echo', arguments: many, _meta: { traceparent: tp } } });
    expect(((await proxy.response(50))['error'] as { code: number }).code).toBe(-32064);
    // A reused id: call 51 is in flight at the server when a ping with its id arrives.
    proxy.send({ jsonrpc: '2.0', id: 51, method: 'tools/call', params: { name: 'echo', arguments: { text: 'slow', delay_ms: 300 } } });
    for (let i = 0; i < 50 && !received().some((m) => m.id === 51); i++) await new Promise((r) => setTimeout(r, 50));
    proxy.send({ jsonrpc: '2.0', id: 51, method: 'ping', params: { _meta: { traceparent: tp } } });
    // An unknown method (refused by default), the agent's own text in its name and params.
    proxy.send({ jsonrpc: '2.0', id: 52, method: `x/${METHOD_TEXT}`, params: { value: SECRET, _meta: { traceparent: tp } } });
    expect(((await proxy.response(52))['error'] as { code: number }).code).toBe(-32601);
    await receiver.waitFor(() => ['50', '51', '52'].every((id) => refusedSpan(id) !== undefined), 'the three refusal spans');
    const [over, reused, unknown] = ['50', '51', '52'].map((id) => refusedSpan(id)!);
    expect([over.name, over.attributes['ward.refusal'], over.attributes['error.type'], over.attributes['mcp.method.name']]).toEqual(['tools/call', 'limit_exceeded', '-32064', 'tools/call']);
    expect([reused.name, reused.attributes['ward.refusal'], reused.attributes['error.type']]).toEqual(['ping', 'id_reused', '-32600']);
    expect([unknown.name, unknown.attributes['ward.refusal'], unknown.attributes['error.type'], unknown.attributes['mcp.method.name']]).toEqual(['mcp.request', 'method_unknown', '-32601', '_OTHER']);
    for (const s of [over, reused, unknown]) {
      expect([s.kind, s.status, s.traceId, s.parentSpanId]).toEqual(['SPAN_KIND_CLIENT', 'STATUS_CODE_ERROR', PARENT_TRACE, PARENT_SPAN]);
      expect(s.attributes).toMatchObject({ 'ward.host': 'mcp-proxy', 'ward.operation': 'refused', 'mcp.session.id': expect.any(String) });
      expect('ward.verdict' in s.attributes).toBe(false);
    }
    // Only the unknown method's refusal is signed; its span names the trace, which verifies.
    expect('ward.trace_id' in over.attributes || 'ward.trace_id' in reused.attributes).toBe(false);
    const path = String(unknown.attributes['ward.trace_path']);
    for (let i = 0; i < 50 && !existsSync(path); i++) await new Promise((r) => setTimeout(r, 100));
    const signed = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    expect([signed['trace_id'], signed['verdict']]).toEqual([unknown.attributes['ward.trace_id'], 'block']);
    expect(ward(['trace', 'verify', path, '--json'], { cwd }).code).toBe(0);
    // The call whose id was reused kept it: answered by the server, its own span not refused.
    expect(JSON.stringify((await proxy.waitFor((m) => m['id'] === 51 && 'result' in m))['result'])).toContain('slow');
    expect(proxy.messages.find((m) => m['id'] === 51 && 'error' in m)?.['error']).toMatchObject({ code: -32600 });
    const decided = () => receiver.spans.find((s) => s.attributes['jsonrpc.request.id'] === '51' && s.attributes['ward.operation'] === 'tools/call');
    await receiver.waitFor(() => decided() !== undefined, 'the span of call 51');
    expect([decided()!.attributes['ward.verdict'], decided()!.status]).toEqual(['allow', '']);
    // Nothing was forwarded for the refusals; no log record or decision-log line for them.
    expect(received().filter((m) => m.id === 50 || m.id === 52 || (m.id === 51 && m.method === 'ping'))).toEqual([]);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.logs.filter((l) => ['50', '52'].includes(String(l.attributes['jsonrpc.request.id'])))).toEqual([]);
    expect(readFileSync(decisionLog, 'utf8')).not.toMatch(/"jsonrpc\.request\.id":"5[02]"/);
    // Neither argument values nor the agent's method text are in anything exported.
    const exported = Buffer.concat(receiver.bodies);
    expect(exported.includes(SECRET)).toBe(false);
    expect(exported.includes(METHOD_TEXT)).toBe(false);
    await receiver.waitFor(() => receiver.points.some((p) => p.name === 'ward_mcp_refusals_total' && p.attributes['refusal'] === 'method_unknown'), 'the refusals counted');
  });

  it('--listen: the listener\'s refusals in a session (over a limit, a reused id, an unreadable body) get spans in that session', async () => {
    const log = join(cwd, 'server-http.log');
    const p = startListening(cwd, [WARD_BIN, 'mcp', 'proxy', '--policy', 'policy.yaml', '--otel', '--workspace', '.', '--listen', '127.0.0.1:0', '--', process.execPath, RECORDER], {
      RECORDING_SERVER_LOG: log,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '50',
    });
    try {
      const url = await p.url;
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const post = async (body: unknown) => {
        const res = await fetch(url, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
        const sid = res.headers.get('mcp-session-id');
        if (sid) headers['mcp-session-id'] = sid;
        return { status: res.status, text: await res.text() };
      };
      await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
      await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
      const session = headers['mcp-session-id'];
      const tp = { traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-01` };
      const many = Object.fromEntries(Array.from({ length: 2100 }, (_, i) => [`k${i}`, SECRET]));
      const over = await post({ jsonrpc: '2.0', id: 'h1', method: 'tools/call', params: { name: 'echo', arguments: many, _meta: tp } });
      expect(over.text).toContain('-32064');
      // A call in flight at the server, then a ping with its id.
      const slow = post({ jsonrpc: '2.0', id: 'h2', method: 'tools/call', params: { name: 'echo', arguments: { text: 'slow', delay_ms: 400 } } });
      for (let i = 0; i < 50 && !(existsSync(log) && readFileSync(log, 'utf8').includes('"h2"')); i++) await new Promise((r) => setTimeout(r, 50));
      const reused = await post({ jsonrpc: '2.0', id: 'h2', method: 'ping', params: { _meta: tp } });
      expect(reused.text).toContain('-32600');
      const unreadable = await post('{"jsonrpc":"2.0","id":"h3",');
      expect(unreadable.status).toBe(400);
      expect((await slow).text).toContain('slow');
      const refused = () => receiver.spans.filter((s) => s.attributes['mcp.session.id'] === session && s.attributes['ward.operation'] === 'refused');
      await receiver.waitFor(() => refused().length >= 3, 'the listener\'s three refusal spans');
      const byCause = Object.fromEntries(refused().map((s) => [String(s.attributes['ward.refusal']), s]));
      expect(Object.keys(byCause).sort()).toEqual(['id_reused', 'limit_exceeded', 'malformed']);
      expect([byCause['limit_exceeded']!.name, byCause['limit_exceeded']!.attributes['error.type'], byCause['limit_exceeded']!.parentSpanId]).toEqual(['tools/call', '-32064', PARENT_SPAN]);
      expect([byCause['id_reused']!.name, byCause['id_reused']!.attributes['jsonrpc.request.id'], byCause['id_reused']!.parentSpanId]).toEqual(['ping', 'h2', PARENT_SPAN]);
      expect([byCause['malformed']!.name, byCause['malformed']!.attributes['error.type'], 'jsonrpc.request.id' in byCause['malformed']!.attributes]).toEqual(['mcp.request', '-32700', false]);
      expect(Buffer.concat(receiver.bodies).includes(SECRET)).toBe(false);
    } finally {
      stopListeners();
    }
  });

  it('refuses --decision-log - on the stdio transport (stdout is the MCP channel)', () => {
    const r = ward(['mcp', 'proxy', '--policy', 'policy.yaml', '--decision-log', '-', '--', process.execPath, RECORDER], { cwd });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('stdout carries the MCP protocol');
  });
});
