// The MCP server of the picture (scripts/otel-picture/render.js): a stdio server with one tool,
// `read_notes`, instrumented with the OpenTelemetry SDK the way an MCP server would be — its span
// is a child of the `params._meta.traceparent` it receives (Ward's span, through the proxy).
import { createInterface } from 'node:readline';
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'notes-mcp-server' }),
  spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter())],
});
const tracer = provider.getTracer('notes-mcp-server');
propagation.setGlobalPropagator(new W3CTraceContextPropagator());

const send = (msg) => process.stdout.write(JSON.stringify(msg) + '\n');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

createInterface({ input: process.stdin }).on('line', async (line) => {
  const msg = JSON.parse(line);
  if (msg.method === 'initialize') return send({ jsonrpc: '2.0', id: msg.id, result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'notes', version: '1.0.0' } } });
  if (msg.method !== 'tools/call') return msg.id === undefined ? undefined : send({ jsonrpc: '2.0', id: msg.id, result: {} });
  const parent = propagation.extract(context.active(), msg.params._meta ?? {});
  const span = tracer.startSpan(`tools/call ${msg.params.name}`, { kind: SpanKind.SERVER, attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': msg.params.name } }, parent);
  await sleep(12); // the tool's work
  span.end();
  await provider.forceFlush();
  send({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: 'notes: 3 entries' }] } });
});
