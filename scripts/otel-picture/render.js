// The picture in docs/observability.md ("One agent trace"): one agent's tool calls through
// `ward mcp proxy --otel` to an instrumented MCP server, every span exported over OTLP (http/json)
// to a receiver in this process, then drawn as a waterfall (HTML) and screenshotted with headless
// Chromium. Nothing is drawn that was not exported.
//
//   npm run build && node scripts/otel-picture/render.js [out.png]   (needs /usr/bin/chromium)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const out = path.resolve(process.argv[2] ?? path.join(repo, 'docs', 'images', 'otel-agent-trace.png'));

// 1. The collector: OTLP/HTTP JSON, kept as received.
const spans = [];
const collector = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    if (req.url === '/v1/traces') {
      for (const rs of JSON.parse(body).resourceSpans ?? []) {
        const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue;
        for (const ss of rs.scopeSpans) for (const s of ss.spans) spans.push({ ...s, service });
      }
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise((r) => collector.listen(0, '127.0.0.1', r));
const endpoint = `http://127.0.0.1:${collector.address().port}`;
const otelEnv = { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '20' };
Object.assign(process.env, otelEnv);

// 2. The agent: its own OpenTelemetry SDK, as an instrumented agent framework has.
const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'coding-agent' }), spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter())] });
const tracer = provider.getTracer('coding-agent');
propagation.setGlobalPropagator(new W3CTraceContextPropagator());

// 3. Ward between the agent and the server.
const cwd = mkdtempSync(path.join(tmpdir(), 'ward-otel-picture-'));
writeFileSync(path.join(cwd, 'policy.yaml'), 'default_verdict: allow\nrules:\n  - name: block-deletes\n    priority: 10\n    effect: block\n    match:\n      tool_names: [delete_notes]\n');
const proxy = spawn(process.execPath, [path.join(repo, 'bin', 'ward.js'), 'mcp', 'proxy', '--policy', 'policy.yaml', '--otel', '--no-run-capture', '--', process.execPath, path.join(here, 'server.mjs')], {
  cwd,
  env: { ...process.env, ...otelEnv, WARD_STATE_DIR: '' },
  stdio: ['pipe', 'pipe', 'inherit'],
});
const waiting = new Map();
createInterface({ input: proxy.stdout }).on('line', (line) => {
  const msg = JSON.parse(line);
  waiting.get(msg.id)?.(msg);
});
const request = (id, method, params) =>
  new Promise((resolve) => {
    waiting.set(id, resolve);
    proxy.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
  });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

await request(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'coding-agent', version: '1.0.0' } });
proxy.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
// A warm-up call in a trace of its own: the picture shows a warm proxy, not its first call's start-up.
await request(100, 'tools/call', { name: 'read_notes', arguments: {} });

const turn = tracer.startSpan('invoke_agent coding-agent', { kind: SpanKind.INTERNAL, attributes: { 'gen_ai.operation.name': 'invoke_agent' } });
const inTurn = trace.setSpan(context.active(), turn);
await sleep(8); // the model thinks
let id = 2;
for (const tool of ['read_notes', 'delete_notes']) {
  const call = tracer.startSpan(`execute_tool ${tool}`, { kind: SpanKind.CLIENT, attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool } }, inTurn);
  const meta = {};
  propagation.inject(trace.setSpan(inTurn, call), meta);
  const reply = await request(id++, 'tools/call', { name: tool, arguments: {}, _meta: meta });
  call.setAttribute('ward.verdict', reply.result?._meta?.ward?.verdict ?? (reply.result?.isError ? 'block' : 'allow'));
  call.end();
  await sleep(6);
}
turn.end();
await provider.forceFlush();
proxy.stdin.end();
await new Promise((r) => proxy.on('exit', r));
await sleep(200);
collector.close();

// 4. The waterfall of the agent's trace, as exported.
const traceId = turn.spanContext().traceId;
const mine = spans.filter((s) => s.traceId === traceId);
const ns = (v) => BigInt(v);
const t0 = mine.reduce((m, s) => (ns(s.startTimeUnixNano) < m ? ns(s.startTimeUnixNano) : m), ns(mine[0].startTimeUnixNano));
const t1 = mine.reduce((m, s) => (ns(s.endTimeUnixNano) > m ? ns(s.endTimeUnixNano) : m), 0n);
const total = Number(t1 - t0);
const children = (parent) => mine.filter((s) => (s.parentSpanId || '') === parent).sort((a, b) => (ns(a.startTimeUnixNano) < ns(b.startTimeUnixNano) ? -1 : 1));
const rows = [];
const walk = (parent, depth) => {
  for (const s of children(parent)) {
    rows.push({ s, depth });
    walk(s.spanId, depth + 1);
  }
};
walk('', 0);
const colors = { 'coding-agent': '#5b8def', ward: '#e8833a', 'notes-mcp-server': '#45a06f' };
const attr = (s, k) => s.attributes.find((a) => a.key === k)?.value;
const label = (s) => {
  const v = attr(s, 'ward.verdict')?.stringValue;
  return s.service === 'ward' && v ? ` — ward.verdict=${v}${v === 'block' ? ` (${attr(s, 'ward.matched_rule')?.stringValue})` : ''}` : '';
};
const bar = (s) => {
  // 85% of the lane: the duration label after the longest bar stays on the page.
  const left = (Number(ns(s.startTimeUnixNano) - t0) / total) * 85;
  const width = Math.max(0.4, (Number(ns(s.endTimeUnixNano) - ns(s.startTimeUnixNano)) / total) * 85);
  const ms = Number(ns(s.endTimeUnixNano) - ns(s.startTimeUnixNano)) / 1e6;
  return `<div class="bar" style="left:${left}%;width:${width}%;background:${colors[s.service] ?? '#999'}"></div><span class="ms" style="left:calc(${left + width}% + 6px)">${ms.toFixed(2)} ms</span>`;
};
const html = `<!doctype html><meta charset="utf-8"><style>
body{font:13px/1.2 -apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:16px;color:#222;background:#fff}
h1{font-size:15px;margin:0 0 4px} p{margin:0 0 12px;color:#666}
table{border-collapse:collapse;width:100%} td{padding:5px 6px;border-bottom:1px solid #eee;white-space:nowrap}
td.name{width:430px} td.svc{width:130px;color:#555} td.lane{position:relative;height:18px}
.bar{position:absolute;top:5px;height:12px;border-radius:2px} .ms{position:absolute;top:4px;font-size:11px;color:#555}
.dot{display:inline-block;width:9px;height:9px;border-radius:2px;margin-right:6px}
</style><h1>Trace ${traceId}</h1><p>${mine.length} spans from 3 services, exported over OTLP by a run of scripts/otel-picture/render.js</p><table>
${rows.map(({ s, depth }) => `<tr><td class="name" style="padding-left:${6 + depth * 18}px"><span class="dot" style="background:${colors[s.service]}"></span>${s.name}${label(s)}</td><td class="svc">${s.service}</td><td class="lane">${bar(s)}</td></tr>`).join('\n')}
</table>`;
const page = path.join(cwd, 'trace.html');
writeFileSync(page, html);
const shot = spawnSync('/usr/bin/chromium', ['--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', `--screenshot=${out}`, `--window-size=1100,${110 + rows.length * 29}`, `file://${page}`], { stdio: 'inherit' });
if (shot.status !== 0) throw new Error(`chromium exited ${shot.status}`);
process.stdout.write(`${rows.length} spans drawn → ${out}\n${rows.map(({ s, depth }) => `${'  '.repeat(depth)}${s.name} [${s.service}]`).join('\n')}\n`);
