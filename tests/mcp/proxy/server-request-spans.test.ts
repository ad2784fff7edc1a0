// Requests the MCP server sends the client through the proxy (`sampling/createMessage`,
// `elicitation/create`, `roots/list`, `ping`, ...) get a span each with `--otel`, as the client's
// requests do (docs/observability.md "The span"): in-process, a real ProxySession and Gatekeeper
// between two recording peers. Each span is a child of the server's `_meta.traceparent`, names
// Ward's span to the client in the forwarded request's `_meta`, carries `ward.direction =
// server_to_client`, and ends once: when the server gets its answer, or the request is refused,
// cancelled or its session ends.
import { describe, expect, it } from 'vitest';
import { RPC, type JsonRpcId, type JsonRpcMessage } from '../../../src/mcp/proxy/jsonrpc.js';
import { decisionAttributes, relayAttributes, spanName } from '../../../src/telemetry/decision-record.js';
import { withTraceContext } from '../../../src/telemetry/mcp-record.js';
import { PARENT, POLICY, rig, type Opened, type Rig } from './span-rig.js';

const SERVER_TEXT = 'server-wrote-this-2c9e';
const meta = { _meta: { traceparent: PARENT, tracestate: 'vendor=1', progressToken: 'p9' } };

/** The request the client was given with this id (the server's id, forwarded). */
const toClient = (r: Rig, id: JsonRpcId) => r.client.next((m) => m.id === id && m.method !== undefined);
/** The answer the server was given to its request `id`. */
const toServer = (r: Rig, id: JsonRpcId) => r.server.next((m) => m.id === id && m.method === undefined);
/** Let the session's pending work (trace durability, deferred ends) run. */
const settle = () => new Promise((res) => setImmediate(res));

/** The one span of server request `id`. */
function spanOf(r: Rig, id: JsonRpcId): Opened {
  const spans = r.telemetry.of(id);
  expect(spans, `spans of ${String(id)}`).toHaveLength(1);
  return spans[0]!;
}

describe('spans of the requests the MCP server sends the client', () => {
  it('a relayed roots/list: child of the server\'s traceparent, passed on to the client, ended when the server has the answer', async () => {
    const r = await rig();
    const request = { id: 'r1', method: 'roots/list', params: { ...meta } };
    r.fromServer(request);
    const forwarded = await toClient(r, 'r1');
    const span = spanOf(r, 'r1');
    expect(span.kind).toBe('relay');
    expect(span.relay).toMatchObject({ method: 'roots/list', jsonRpcId: 'r1', direction: 'server_to_client' });
    expect(span.parent).toEqual({ traceparent: PARENT, tracestate: 'vendor=1' });
    expect(relayAttributes(span.relay!)).toEqual({
      'mcp.method.name': 'roots/list',
      'mcp.session.id': 's',
      'jsonrpc.request.id': 'r1',
      'ward.host': 'mcp-proxy',
      'ward.operation': 'relay',
      'ward.direction': 'server_to_client',
    });
    // The client gets the server's request, Ward's span as its parent (the same helper as toward the server).
    expect(forwarded).toEqual(withTraceContext({ jsonrpc: '2.0', ...request } as JsonRpcMessage, span.carrier));
    expect((forwarded.params!['_meta'] as Record<string, unknown>)['progressToken']).toBe('p9');
    expect(span.ends).toEqual([]); // open until the server has its answer
    r.send({ id: 'r1', result: { roots: [{ uri: 'file:///home/me/project', name: 'project' }] } });
    await toServer(r, 'r1');
    await settle();
    expect(span.ends).toEqual([undefined]);
    // A client request with the same id is another id space: its span is its own.
    r.send({ id: 'r1', method: 'ping' });
    await r.server.next((m) => m.id === 'r1' && m.method === 'ping');
    expect(r.telemetry.of('r1').map((s) => [s.relay!.direction, s.ends.length])).toEqual([
      ['server_to_client', 1],
      [undefined, 0],
    ]);
  });

  it('the client\'s roots/list answer is decided: a ward.roots_answer span under the request\'s, and a blocked answer ends the request\'s span with -32060', async () => {
    const r = await rig({ policy: `${POLICY}  - { name: no-etc, priority: 10, effect: block, match: { target_kinds: [path], target_values: [/etc] } }\n` });
    r.fromServer({ id: 'a1', method: 'roots/list', params: meta });
    await toClient(r, 'a1');
    r.send({ id: 'a1', result: { roots: [{ uri: 'file:///home/me/project' }] } });
    await toServer(r, 'a1');
    r.fromServer({ id: 'a2', method: 'roots/list', params: meta });
    await toClient(r, 'a2');
    r.send({ id: 'a2', result: { roots: [{ uri: 'file:///etc' }] } });
    expect((await toServer(r, 'a2')).error?.code).toBe(RPC.DENIED);
    await settle();
    const [allowed, blocked] = r.telemetry.decided;
    expect(allowed!.record).toMatchObject({ operation: 'roots_answer', mcpMethod: 'roots/list', verdict: 'allow', toolName: 'mcp.roots.list', direction: 'server_to_client', jsonRpcId: 'a1', correlationId: 's:server:a1/answer' });
    expect(spanName(allowed!.record)).toBe('ward.roots_answer');
    expect(allowed!.parent).toEqual(spanOf(r, 'a1').carrier);
    expect(blocked!.record).toMatchObject({ operation: 'roots_answer', verdict: 'block', matchedRule: 'no-etc', jsonRpcId: 'a2' });
    expect(blocked!.parent).toEqual(spanOf(r, 'a2').carrier);
    expect([spanOf(r, 'a1').ends, spanOf(r, 'a2').ends]).toEqual([[undefined], [RPC.DENIED]]);
    // No root (a value) in the record without --otel-targets.
    expect(JSON.stringify(decisionAttributes(blocked!.record))).not.toContain('/etc');
    expect(r.metrics.decisions.get({ verdict: 'block' })).toBe(1);
  });

  it('a server ping the client answers with an error: error.type is the code', async () => {
    const r = await rig();
    r.fromServer({ id: 2, method: 'ping' });
    await toClient(r, 2);
    r.send({ id: 2, error: { code: -32601, message: 'no ping here' } });
    await toServer(r, 2);
    const span = spanOf(r, 2);
    expect([span.relay!.method, span.parent?.traceparent, span.ends]).toEqual(['ping', undefined, [-32601]]);
  });

  it('a decided elicitation/create (allowed): a decision span with the direction, forwarded with Ward\'s context', async () => {
    const r = await rig();
    const params = { message: `confirm ${SERVER_TEXT}`, requestedSchema: { type: 'object', properties: {} }, ...meta };
    r.fromServer({ id: 3, method: 'elicitation/create', params });
    const forwarded = await toClient(r, 3);
    const span = spanOf(r, 3);
    expect(span.kind).toBe('request');
    expect(span.decision).toMatchObject({ operation: 'elicitation/create', mcpMethod: 'elicitation/create', verdict: 'allow', toolName: 'mcp.elicitation.create', direction: 'server_to_client', jsonRpcId: '3', correlationId: 's:server:3' });
    expect(spanName(span.decision!)).toBe('elicitation/create');
    expect(decisionAttributes(span.decision!)['ward.direction']).toBe('server_to_client');
    expect(span.parent?.traceparent).toBe(PARENT);
    expect(forwarded).toEqual(withTraceContext({ jsonrpc: '2.0', id: 3, method: 'elicitation/create', params } as JsonRpcMessage, span.carrier));
    expect(JSON.stringify(decisionAttributes(span.decision!))).not.toContain(SERVER_TEXT);
    r.send({ id: 3, result: { action: 'decline' } });
    await toServer(r, 3);
    await settle();
    expect(span.ends).toEqual([undefined]);
    expect(r.metrics.decisions.get({ verdict: 'allow' })).toBe(1);
  });

  it('a decided sampling/createMessage (blocked): never reaches the client, the span ends with the code the server got', async () => {
    const r = await rig();
    r.fromServer({ id: 4, method: 'sampling/createMessage', params: { messages: [], maxTokens: 5, ...meta } });
    const answer = await toServer(r, 4);
    expect(answer.error?.code).toBe(RPC.DENIED);
    await settle();
    const span = spanOf(r, 4);
    expect(span.decision).toMatchObject({ verdict: 'block', matchedRule: 'no-sampling', direction: 'server_to_client' });
    expect(span.ends).toEqual([RPC.DENIED]);
    expect(r.client.sent.some((m) => m.id === 4)).toBe(false);
  });

  it('the result firewall redacts a server request\'s params: the client gets the redacted params with Ward\'s context', async () => {
    const r = await rig({ policy: `${POLICY}results:\n  pii: { action: redact, patterns: [{ name: ssn, regex: '\\b\\d{3}-\\d{2}-\\d{4}\\b' }] }\n` });
    r.fromServer({ id: 5, method: 'elicitation/create', params: { message: 'ssn 123-45-6789', requestedSchema: { type: 'object', properties: {} }, ...meta } });
    const forwarded = await toClient(r, 5);
    const span = spanOf(r, 5);
    expect(JSON.stringify(forwarded.params)).not.toContain('123-45-6789');
    expect((forwarded.params!['_meta'] as Record<string, unknown>)['traceparent']).toBe(span.carrier.traceparent);
  });

  it('an unknown server method: refused (method_unknown, _OTHER, not counted as a client refusal), or decided under --unknown-methods decide', async () => {
    const r = await rig();
    r.fromServer({ id: 6, method: `x/${SERVER_TEXT}`, params: { v: SERVER_TEXT, ...meta } });
    expect((await toServer(r, 6)).error?.code).toBe(RPC.METHOD_NOT_FOUND);
    await settle();
    const span = spanOf(r, 6);
    expect(span.relay).toMatchObject({ method: 'mcp.request', direction: 'server_to_client', refusal: { cause: 'method_unknown', mcpMethod: '_OTHER' } });
    expect(relayAttributes(span.relay!)).toMatchObject({ 'ward.operation': 'refused', 'ward.refusal': 'method_unknown', 'ward.direction': 'server_to_client', 'mcp.method.name': '_OTHER' });
    expect(span.relay!.refusal!.traceId).toMatch(/^[0-9a-f]{16,}$/);
    expect([span.parent?.traceparent, span.ends]).toEqual([PARENT, [RPC.METHOD_NOT_FOUND]]);
    expect(JSON.stringify(span.relay) + JSON.stringify(relayAttributes(span.relay!))).not.toContain(SERVER_TEXT);
    expect(r.metrics.refusals.get({ refusal: 'method_unknown' })).toBe(0);
    expect(r.client.sent.some((m) => m.id === 6)).toBe(false);

    const d = await rig({ unknownMethods: 'decide' });
    d.fromServer({ id: 7, method: `y/${SERVER_TEXT}`, params: meta });
    const forwarded = await toClient(d, 7);
    const decided = spanOf(d, 7);
    expect(decided.decision).toMatchObject({ operation: '_OTHER', verdict: 'allow', direction: 'server_to_client' });
    expect(spanName(decided.decision!)).toBe('mcp.request');
    expect([forwarded.method, (forwarded.params!['_meta'] as Record<string, unknown>)['traceparent']]).toEqual([`y/${SERVER_TEXT}`, decided.carrier.traceparent]);
  });

  it('a reused server id is refused (id_reused); the request in flight keeps its open span', async () => {
    const r = await rig();
    r.fromServer({ id: 8, method: 'roots/list', params: meta });
    await toClient(r, 8);
    r.fromServer({ id: 8, method: 'ping', params: meta });
    expect((await toServer(r, 8)).error?.code).toBe(RPC.INVALID_REQUEST);
    await settle();
    const [first, refused] = r.telemetry.of(8);
    expect(first!.ends).toEqual([]);
    expect(refused!.relay).toMatchObject({ method: 'ping', direction: 'server_to_client', refusal: { cause: 'id_reused' } });
    expect(refused!.ends).toEqual([RPC.INVALID_REQUEST]);
    r.send({ id: 8, result: { roots: [] } });
    await r.server.next((m) => m.id === 8 && m.result !== undefined);
    await settle();
    expect(first!.ends).toEqual([undefined]);
  });

  it('not_signed: a server request neither decided nor refused with a signed trace', async () => {
    const r = await rig();
    r.gate.decide = () => {
      throw new Error('cannot evaluate');
    };
    r.gate.refuse = () => {
      throw new Error('cannot sign');
    };
    r.fromServer({ id: 9, method: 'elicitation/create', params: { message: 'm', requestedSchema: { type: 'object' }, ...meta } });
    expect((await toServer(r, 9)).error?.code).toBe(RPC.INTERNAL_ERROR);
    await settle();
    expect(spanOf(r, 9).relay).toMatchObject({ method: 'elicitation/create', refusal: { cause: 'not_signed' }, direction: 'server_to_client' });
    expect(spanOf(r, 9).ends).toEqual([RPC.INTERNAL_ERROR]);
  });

  it('cancelled by the server, or left unanswered when the session ends: ended once, with the reason', async () => {
    const r = await rig();
    r.fromServer({ id: 10, method: 'roots/list', params: meta });
    r.fromServer({ id: 11, method: 'elicitation/create', params: { message: 'm', requestedSchema: { type: 'object' }, ...meta } });
    await Promise.all([toClient(r, 10), toClient(r, 11)]);
    r.fromServer({ method: 'notifications/cancelled', params: { requestId: 10, reason: 'no longer needed' } });
    await r.client.next((m) => m.method === 'notifications/cancelled');
    expect(spanOf(r, 10).ends).toEqual(['cancelled']);
    // A late answer ends nothing more.
    r.send({ id: 10, result: { roots: [] } });
    await settle();
    await r.session.end();
    expect(spanOf(r, 10).ends).toEqual(['cancelled']);
    expect(spanOf(r, 11).ends).toEqual(['session_ended']);
  });
});
