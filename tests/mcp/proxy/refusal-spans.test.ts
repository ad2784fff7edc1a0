// Every request the MCP proxy answers itself before a policy decision gets a refusal's span
// (`--otel`, docs/observability.md "Refusals"): each refusal path of the session is driven here,
// in-process (a real ProxySession and Gatekeeper, faults injected into the gate), and must end a
// span with its stable cause and the JSON-RPC error code the client got. The registry of causes,
// the paths exercised and the documented table must be the same set.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DecisionThreadError } from '../../../src/mcp/proxy/decision-thread.js';
import { RPC, type JsonRpcId } from '../../../src/mcp/proxy/jsonrpc.js';
import type { Peer } from '../../../src/mcp/proxy/peer.js';
import { REFUSAL_CAUSES } from '../../../src/mcp/proxy/refusals.js';
import { decisionAttributes, relayAttributes, spanName, type RelayRecord } from '../../../src/telemetry/decision-record.js';
import { REPO } from '../../cli/run.js';
import { PARENT, rig, type Rig } from './span-rig.js';

const AGENT_TEXT = 'agent-wrote-this-7f3a';

const meta = { _meta: { traceparent: PARENT } };
/** Causes the tests below drove a refusal path to. */
const exercised = new Set<string>();

/** The refusal's span of request `id`: one span, with `cause`, ended once with the code the client got. */
async function expectRefused(r: Rig, id: JsonRpcId | null, cause: string, code: number): Promise<RelayRecord> {
  const answer = id === null ? await r.client.next((m) => m.id === null && m.error !== undefined) : await r.answer(id);
  expect(answer.error?.code, JSON.stringify(answer)).toBe(code);
  // Ends are recorded when they happen: let the session's pending work run.
  await new Promise((res) => setImmediate(res));
  const spans = id === null ? r.telemetry.refusals().filter((s) => s.relay!.jsonRpcId === undefined) : r.telemetry.of(id);
  expect(spans, `spans of ${String(id)}`).toHaveLength(1);
  const span = spans[0]!;
  expect(span.kind).toBe('relay');
  expect(span.relay!.refusal?.cause).toBe(cause);
  expect(span.ends).toEqual([code]);
  expect(Object.keys(REFUSAL_CAUSES)).toContain(cause);
  // Counted once per refusal (`ward_mcp_refusals_total{refusal}`).
  expect(r.metrics.refusals.get({ refusal: cause })).toBe(r.telemetry.refusals().filter((s) => s.relay!.refusal!.cause === cause).length);
  exercised.add(cause);
  return span.relay!;
}

describe('refusal spans: every refusal path of the MCP proxy session', () => {
  it('id_reused: a second request with an id in flight; the first keeps its id and its open span', async () => {
    const r = await rig();
    r.send({ id: 1, method: 'tools/call', params: { name: 'echo', arguments: {} } });
    await r.server.next((m) => m.id === 1);
    r.send({ id: 1, method: 'ping', params: meta });
    const answer = await r.client.next((m) => m.id === 1 && m.error !== undefined);
    expect(answer.error!.code).toBe(RPC.INVALID_REQUEST);
    const [first, refused] = r.telemetry.of(1);
    expect(first!.kind).toBe('request');
    expect(first!.ends).toEqual([]); // still in flight
    expect(refused!.relay).toMatchObject({ method: 'ping', jsonRpcId: '1', refusal: { cause: 'id_reused' } });
    expect(refused!.parent?.traceparent).toBe(PARENT);
    expect(refused!.ends).toEqual([RPC.INVALID_REQUEST]);
    exercised.add('id_reused');
  });

  it('limit_exceeded: over --max-call-keys, and a line over --max-message-bytes', async () => {
    const r = await rig({ limits: { maxBytes: 1 << 20, maxKeys: 4 } });
    r.send({ id: 2, method: 'resources/read', params: { uri: 'file:///a', a: 1, b: 2, c: 3, d: 4, ...meta } });
    const span = await expectRefused(r, 2, 'limit_exceeded', RPC.LIMIT_EXCEEDED);
    expect(span.method).toBe('resources/read');
    expect(r.server.sent.some((m) => m.id === 2)).toBe(false);
    const malformed = r.client.onmalformed as Peer['onmalformed'];
    malformed!('message of 9000000 bytes exceeds the 8388608-byte limit (--max-message-bytes)', 3, { response: false });
    const unread = await expectRefused(r, 3, 'limit_exceeded', RPC.INVALID_REQUEST);
    expect(relayAttributes(unread)['mcp.method.name']).toBeUndefined(); // not read
    // An id as long as the request is not put in a span.
    const longId = `id-${'x'.repeat(300)}`;
    r.send({ id: longId, method: 'ping', params: { a: 1, b: 2, c: 3, d: 4, e: 5 } });
    await r.answer(longId);
    const last = r.telemetry.refusals().at(-1)!;
    expect([last.relay!.refusal!.cause, last.relay!.method, last.relay!.jsonRpcId, last.ends]).toEqual(['limit_exceeded', 'ping', undefined, [RPC.LIMIT_EXCEEDED]]);
  });

  it('malformed: an unreadable line, and one whose id is in flight (which stays in flight)', async () => {
    const r = await rig();
    r.client.onmalformed!('not JSON', null);
    const span = await expectRefused(r, null, 'malformed', RPC.PARSE_ERROR);
    expect(span.method).toBe('mcp.request');
    expect(relayAttributes(span)).not.toHaveProperty('mcp.method.name');
    r.send({ id: 4, method: 'tools/call', params: { name: 'echo', arguments: {} } });
    await r.server.next((m) => m.id === 4);
    r.client.onmalformed!('not a JSON-RPC 2.0 message', 4);
    await r.client.next((m) => m.id === 4 && m.error?.code === RPC.INVALID_REQUEST);
    await new Promise((res) => setImmediate(res));
    const [call, malformed] = r.telemetry.of(4);
    expect(call!.ends).toEqual([]); // the call's span is not ended by the other message's error
    expect(malformed!.relay!.refusal?.cause).toBe('malformed');
    // Its id is still taken: a request reusing it is refused, not forwarded.
    r.send({ id: 4, method: 'ping' });
    await new Promise((res) => setImmediate(res));
    expect(r.server.sent.filter((m) => m.id === 4)).toHaveLength(1);
    expect(r.telemetry.of(4).at(-1)!.relay!.refusal?.cause).toBe('id_reused');
  });

  it('method_unknown: refused under --unknown-methods refuse, with its signed trace; the agent\'s method text is not in the span', async () => {
    const r = await rig();
    r.send({ id: 5, method: `x/${AGENT_TEXT}`, params: { secret: AGENT_TEXT, ...meta } });
    const span = await expectRefused(r, 5, 'method_unknown', RPC.METHOD_NOT_FOUND);
    expect(span.refusal!.traceId).toMatch(/^[0-9a-f]{16,}$/);
    const attributes = relayAttributes(span);
    expect(attributes).toMatchObject({ 'mcp.method.name': '_OTHER', 'ward.operation': 'refused', 'ward.refusal': 'method_unknown', 'ward.trace_id': span.refusal!.traceId });
    expect(span.method).toBe('mcp.request');
    expect(JSON.stringify(span) + JSON.stringify(attributes)).not.toContain(AGENT_TEXT);
    expect(r.telemetry.of(5)[0]!.parent?.traceparent).toBe(PARENT);
  });

  it('method_not_canonical and invalid_params: tool calls refused with a signed trace', async () => {
    const r = await rig();
    r.send({ id: 6, method: 'Tools/Call', params: { name: 'echo', arguments: {}, ...meta } });
    const misspelled = await expectRefused(r, 6, 'method_not_canonical', RPC.METHOD_NOT_FOUND);
    expect(relayAttributes(misspelled)['mcp.method.name']).toBe('_OTHER');
    expect(misspelled.refusal!.traceId).toBeTruthy();
    r.send({ id: 7, method: 'tools/call', params: { arguments: {}, ...meta } });
    const invalid = await expectRefused(r, 7, 'invalid_params', RPC.INVALID_PARAMS);
    expect(invalid.method).toBe('tools/call');
    expect(invalid.refusal!.traceId).toBeTruthy();
  });

  it('server_unavailable: a relayed request after the server went away', async () => {
    const r = await rig();
    r.server.onclose!(new Error('server exited'));
    r.send({ id: 8, method: 'tools/list', params: meta });
    const span = await expectRefused(r, 8, 'server_unavailable', RPC.UPSTREAM_UNAVAILABLE);
    expect(span.method).toBe('tools/list');
  });

  it('hosts_unresolved: the policy needs the call\'s hosts resolved and resolution failed', async () => {
    const r = await rig();
    r.gate.resolveHosts = () => Promise.reject(new Error('resolver down'));
    r.send({ id: 9, method: 'tools/call', params: { name: 'fetch', arguments: { url: 'https://example.com' }, ...meta } });
    await expectRefused(r, 9, 'hosts_unresolved', RPC.INTERNAL_ERROR);
    r.send({ id: 10, method: 'resources/read', params: { uri: 'https://example.com/a', ...meta } });
    await expectRefused(r, 10, 'hosts_unresolved', RPC.INTERNAL_ERROR);
  });

  it('decision_thread_failed: a large call the decision thread did not answer', async () => {
    const r = await rig();
    Object.defineProperty(r.gate, 'offLoop', { get: () => true });
    r.gate.decideOffLoop = () => Promise.reject(new DecisionThreadError('the decision thread missed its deadline'));
    const big = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${i}`, i]));
    r.send({ id: 11, method: 'tools/call', params: { name: 'echo', arguments: big, ...meta } });
    await expectRefused(r, 11, 'decision_thread_failed', RPC.INTERNAL_ERROR);
    r.send({ id: 12, method: 'prompts/get', params: { name: 'p', arguments: big, ...meta } });
    const method = await expectRefused(r, 12, 'decision_thread_failed', RPC.INTERNAL_ERROR);
    expect(method.method).toBe('prompts/get');
  });

  it('not_signed: neither the decision nor its refusal could be signed (tool call, method, unknown method decided)', async () => {
    const r = await rig({ unknownMethods: 'decide' });
    r.gate.decide = () => {
      throw new Error('cannot evaluate');
    };
    r.gate.refuse = () => {
      throw new Error('cannot sign');
    };
    r.send({ id: 13, method: 'tools/call', params: { name: 'echo', arguments: {}, ...meta } });
    await expectRefused(r, 13, 'not_signed', RPC.INTERNAL_ERROR);
    r.send({ id: 14, method: 'resources/read', params: { uri: 'file:///a', ...meta } });
    await expectRefused(r, 14, 'not_signed', RPC.INTERNAL_ERROR);
    r.send({ id: 15, method: `y/${AGENT_TEXT}`, params: meta });
    const unknown = await expectRefused(r, 15, 'not_signed', RPC.METHOD_NOT_FOUND);
    expect(relayAttributes(unknown)['mcp.method.name']).toBe('_OTHER');
    expect(unknown.refusal!.traceId).toBeUndefined();
  });

  it('the listener\'s refusals (Streamable HTTP) end spans in the session they were for', async () => {
    const r = await rig();
    r.session.listenerRefused('id_reused', [{ id: 16, method: 'tools/call', params: meta }, { id: 17, method: AGENT_TEXT }], RPC.INVALID_REQUEST);
    const [a, b] = [r.telemetry.of(16)[0]!, r.telemetry.of(17)[0]!];
    expect([a.relay!.method, a.parent?.traceparent, a.ends]).toEqual(['tools/call', PARENT, [RPC.INVALID_REQUEST]]);
    expect(relayAttributes(b.relay!)['mcp.method.name']).toBe('_OTHER');
    expect(JSON.stringify(b)).not.toContain(AGENT_TEXT);
  });

  it('a relayed or decided request is not a refusal; a blocked decision keeps its decision span', async () => {
    const r = await rig();
    r.send({ id: 20, method: 'ping' });
    r.send({ id: 21, method: 'tools/call', params: { name: 'rm', arguments: {} } });
    await r.answer(21);
    expect(r.telemetry.of(20)[0]!.relay!.refusal).toBeUndefined();
    expect(relayAttributes(r.telemetry.of(20)[0]!.relay!)['ward.operation']).toBe('relay');
    expect(r.telemetry.of(21).map((s) => s.kind)).toEqual(['request']);
  });

  it('an unknown method decided under --unknown-methods decide is a decision: a decided span named mcp.request, forwarded with Ward\'s context', async () => {
    const r = await rig({ unknownMethods: 'decide' });
    r.send({ id: 30, method: `z/${AGENT_TEXT}`, params: { value: 1, ...meta } });
    const forwarded = await r.server.next((m) => m.id === 30);
    const [span] = r.telemetry.of(30);
    expect(span!.kind).toBe('request');
    expect(span!.parent?.traceparent).toBe(PARENT);
    expect(span!.decision).toMatchObject({ operation: '_OTHER', mcpMethod: '_OTHER', verdict: 'allow', toolName: 'mcp.method' });
    expect(spanName(span!.decision!)).toBe('mcp.request');
    expect(JSON.stringify(decisionAttributes(span!.decision!))).not.toContain(AGENT_TEXT);
    // The server's spans join Ward's (the carrier the telemetry gave), the client's own method kept.
    expect([forwarded.method, (forwarded.params?.['_meta'] as Record<string, unknown>)['traceparent']]).toEqual([`z/${AGENT_TEXT}`, span!.carrier.traceparent]);
    expect(span!.carrier.traceparent).not.toBe(PARENT);
    expect(r.telemetry.refusals()).toEqual([]);
  });

  it('the registry, the paths above and docs/observability.md name the same causes', () => {
    expect([...exercised].sort()).toEqual(Object.keys(REFUSAL_CAUSES).sort());
    const doc = readFileSync(join(REPO, 'docs', 'observability.md'), 'utf8');
    const start = doc.indexOf('### Refusals');
    expect(start).toBeGreaterThan(0);
    const rest = doc.slice(start + 1);
    const section = rest.slice(0, rest.search(/\n#{2,3} /));
    const documented = [...section.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]).sort();
    expect(documented).toEqual(Object.keys(REFUSAL_CAUSES).sort());
  });
});
