import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, tempDir } from '../cli/run.js';
import { RawProxy } from '../mcp/proxy/helpers.js';
import { exportingTo, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

// `ward mcp proxy --otel` against a real OTLP/HTTP receiver, with a stub MCP server that sends the
// client requests of its own in the middle of a tool call (sampling/createMessage, roots/list, a
// method no revision defines, ping): each gets Ward's span, child of the server's
// `_meta.traceparent`, and the client is given Ward's span as the parent (docs/observability.md
// "Requests the MCP server sends the client").

const HOSTILE = join(REPO, 'tests', 'mcp', 'proxy', 'hostile-server.mjs');
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const AGENT_SPAN = '00f067aa0ba902b7';
/** The span of the server's own work on the tool call: the parent it sends its requests under. */
const SERVER_SPAN = 'a3ce929d0e0e4736';
const tp = (span: string) => `00-${TRACE}-${span}-01`;
const SECRET = `wsk_${randomBytes(18).toString('base64url')}`;
const ROOT_TEXT = 'client-root-dir-6d0b';

let receiver: OtlpReceiver;
let proxy: RawProxy;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  const cwd = tempDir('ward-otel-server-requests-');
  writeFileSync(join(cwd, 'policy.yaml'), 'default_verdict: allow\nrules: []\n');
  const log = join(cwd, 'server.log');
  writeFileSync(log, '');
  proxy = new RawProxy(['--policy', 'policy.yaml', '--otel', '--state-dir', join(cwd, '.ward'), '--arg-source', 'user'], [process.execPath, HOSTILE], cwd, {
    HOSTILE_LOG: log,
    HOSTILE_SECRET: SECRET,
    ...exportingTo(receiver),
  });
  await proxy.initialize();
}, 30_000);

afterAll(async () => {
  // The last test ends the session itself; after a failure before it, it is ended here.
  if (proxy && proxy.child.exitCode === null) proxy.end();
  await proxy?.exited;
  await receiver?.close();
});

/** A tool call (under the agent's span) whose tool sends the client a request under the server's span. */
function ask(id: number, tool: string): void {
  proxy.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: { meta: { traceparent: tp(SERVER_SPAN), tracestate: 'srv=1' } }, _meta: { traceparent: tp(AGENT_SPAN) } } });
}

/** The request the server sent the client, as the client received it (the nth of that method). */
async function received(method: string, nth = 0): Promise<Record<string, any>> {
  await proxy.waitFor((m) => proxy.messages.filter((x) => x['method'] === method).length > nth && m['method'] === method);
  return proxy.messages.filter((m) => m['method'] === method)[nth]!;
}

/** The exported span of the server request with this id, once it has ended (not the span of Ward's decision on its answer). */
async function spanOf(id: string): Promise<ReceivedSpan> {
  const find = () => receiver.spans.find((s) => s.attributes['jsonrpc.request.id'] === id && s.attributes['ward.direction'] === 'server_to_client' && s.attributes['ward.operation'] !== 'roots_answer');
  await receiver.waitFor(() => find() !== undefined, `the span of server request ${id}`);
  return find()!;
}

describe('ward mcp proxy --otel: requests the MCP server sends the client', () => {
  it('a decided sampling/createMessage: child of the server\'s traceparent, the client given Ward\'s span, error.type from the client\'s error answer', async () => {
    ask(1, 'ask_sampling');
    const request = await received('sampling/createMessage');
    proxy.send({ jsonrpc: '2.0', id: request['id'], error: { code: -32001, message: 'the user declined' } });
    expect(JSON.stringify((await proxy.response(1))['result'])).toContain('-32001'); // the server got the client's answer
    const span = await spanOf(String(request['id']));
    expect([span.name, span.kind, span.traceId, span.parentSpanId, span.status]).toEqual(['sampling/createMessage', 'SPAN_KIND_CLIENT', TRACE, SERVER_SPAN, 'STATUS_CODE_ERROR']);
    expect(span.attributes).toMatchObject({
      'mcp.method.name': 'sampling/createMessage',
      'mcp.session.id': expect.any(String),
      'ward.host': 'mcp-proxy',
      'ward.operation': 'sampling/createMessage',
      'ward.direction': 'server_to_client',
      'ward.verdict': 'allow',
      'gen_ai.tool.name': 'mcp.sampling.create_message',
      'error.type': '-32001',
    });
    expect(span.attributes['ward.trace_id']).toMatch(/^[0-9a-f]+$/);
    expect(span.events.map((e) => e.name)).toEqual(['ward.decision']);
    // What the client received: the server's request, Ward's span as its parent, the server's tracestate kept.
    expect(request['params']._meta).toEqual({ traceparent: tp(span.spanId), tracestate: 'srv=1' });
    expect(request['params'].maxTokens).toBe(10);
    // A decision: its log record, in the span, with the direction.
    await receiver.waitFor(() => receiver.logs.some((l) => l.spanId === span.spanId), 'the sampling decision\'s log record');
    expect(receiver.logs.find((l) => l.spanId === span.spanId)!.attributes).toMatchObject({ 'ward.direction': 'server_to_client', 'ward.verdict': 'allow' });
    // The tool call that asked is a span of its own, the client's request (no direction).
    const call = receiver.spans.find((s) => s.attributes['jsonrpc.request.id'] === '1' && s.name === 'tools/call ask_sampling');
    expect(call?.attributes['ward.direction']).toBeUndefined();
  });

  it('a relayed roots/list: ward.operation=relay, no verdict, ended when the server has the client\'s answer', async () => {
    ask(2, 'ask_roots');
    const request = await received('roots/list');
    proxy.send({ jsonrpc: '2.0', id: request['id'], result: { roots: [{ uri: `file:///home/me/${ROOT_TEXT}`, name: 'project' }] } });
    expect(JSON.stringify((await proxy.response(2))['result'])).toContain(ROOT_TEXT);
    const span = await spanOf(String(request['id']));
    expect([span.name, span.kind, span.traceId, span.parentSpanId, span.status]).toEqual(['roots/list', 'SPAN_KIND_CLIENT', TRACE, SERVER_SPAN, '']);
    expect(span.attributes).toMatchObject({ 'mcp.method.name': 'roots/list', 'ward.operation': 'relay', 'ward.direction': 'server_to_client' });
    expect('ward.verdict' in span.attributes || 'error.type' in span.attributes).toBe(false);
    expect(request['params']._meta.traceparent).toBe(tp(span.spanId));
    // Ward decided the answer before the server got it: a span of that decision under the request's, and its log record.
    await receiver.waitFor(() => receiver.spans.some((s) => s.name === 'ward.roots_answer'), 'the roots answer\'s span');
    const decided = receiver.spans.find((s) => s.name === 'ward.roots_answer')!;
    expect([decided.traceId, decided.parentSpanId]).toEqual([TRACE, span.spanId]);
    expect(decided.attributes).toMatchObject({ 'ward.operation': 'roots_answer', 'mcp.method.name': 'roots/list', 'ward.verdict': 'allow', 'ward.direction': 'server_to_client', 'gen_ai.tool.name': 'mcp.roots.list' });
    await receiver.waitFor(() => receiver.logs.some((l) => l.spanId === decided.spanId), 'the roots answer\'s log record');
  });

  it('a method Ward does not know, refused: mcp.request, _OTHER, method_unknown, the server\'s text nowhere in the export', async () => {
    ask(3, 'ask_unknown');
    expect(JSON.stringify((await proxy.response(3))['result'])).toContain('-32601');
    const span = await spanOf('hostile-3');
    expect([span.name, span.traceId, span.parentSpanId, span.status]).toEqual(['mcp.request', TRACE, SERVER_SPAN, 'STATUS_CODE_ERROR']);
    expect(span.attributes).toMatchObject({ 'mcp.method.name': '_OTHER', 'ward.operation': 'refused', 'ward.refusal': 'method_unknown', 'ward.direction': 'server_to_client', 'error.type': '-32601' });
    expect(proxy.messages.some((m) => m['method'] === 'hostile/exfiltrate')).toBe(false);
    const exported = Buffer.concat(receiver.bodies);
    for (const text of ['exfiltrate', SECRET, ROOT_TEXT]) expect(exported.includes(text), text).toBe(false);
  });

  it('a request the client never answers ends its span with the session (session_ended)', async () => {
    ask(4, 'ask_ping');
    const request = await received('ping');
    expect(request['params']._meta.traceparent).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
    proxy.end();
    await proxy.exited;
    const span = await spanOf(String(request['id']));
    expect([span.name, span.parentSpanId, span.attributes['error.type'], span.status]).toEqual(['ping', SERVER_SPAN, 'session_ended', 'STATUS_CODE_ERROR']);
    expect(request['params']._meta.traceparent).toBe(tp(span.spanId));
    expect(Buffer.concat(receiver.bodies).includes(SECRET)).toBe(false);
  });
});
