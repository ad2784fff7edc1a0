import { describe, expect, it } from 'vitest';
import type { CallDecision } from '../../../src/mcp/proxy/gatekeeper.js';
import type { JsonRpcMessage } from '../../../src/mcp/proxy/jsonrpc.js';
import { DeferredPeer, type Inbound, type Peer } from '../../../src/mcp/proxy/peer.js';
import { isModernProtocolVersion, requestClientName, requestProtocolVersion, resultServerInfo } from '../../../src/mcp/proxy/protocol.js';
import { verdictReply } from '../../../src/mcp/proxy/replies.js';

const decision = (verdict: string, reasonCodes: string[]): CallDecision => ({
  verdict,
  reasonCodes,
  violations: [],
  matchedRule: 'r',
  traceId: 'a'.repeat(24),
  intentDigest: 'b'.repeat(64),
  policyDigest: 'c'.repeat(64),
  toolName: 'write_file',
  argsDigest: 'd'.repeat(64),
  approvalScope: ['tool:write_file'],
  targets: [],
  durable: Promise.resolve('x'),
});

describe("Ward's reply to a call it did not forward", () => {
  it('is an isError result with the reason in its text and the ward object in _meta, never structuredContent', () => {
    for (const verdict of ['block', 'require_approval', 'dry_run']) {
      const reply = verdictReply(7, decision(verdict, ['matched_rule_x']), 'result', '/tmp/approvals');
      const result = reply.result as Record<string, unknown>;
      expect(result['isError']).toBe(true);
      expect(result).not.toHaveProperty('structuredContent');
      expect(result).not.toHaveProperty('resultType');
      expect(((result['_meta'] as { ward: Record<string, unknown> }).ward)['verdict']).toBe(verdict);
      const text = (result['content'] as { type: string; text: string }[])[0]!;
      expect(text.type).toBe('text');
      expect(text.text).toContain('matched_rule_x');
    }
  });

  it('carries resultType "complete" when answering a 2026-07-28 request', () => {
    const reply = verdictReply(7, decision('block', ['matched_rule_x']), 'result', '/tmp/approvals', undefined, { modern: true });
    expect((reply.result as Record<string, unknown>)['resultType']).toBe('complete');
    expect((reply.result as Record<string, unknown>)['isError']).toBe(true);
  });

  it('--deny-as error: JSON-RPC error -32060 with the ward object in error.data, in any revision', () => {
    for (const modern of [false, true]) {
      const reply = verdictReply(7, decision('block', ['matched_rule_x']), 'error', '/tmp/approvals', undefined, { modern });
      expect(reply.error?.code).toBe(-32060);
      expect((reply.error?.data as Record<string, unknown>)['verdict']).toBe('block');
      expect(reply).not.toHaveProperty('result');
    }
  });
});

describe('protocol revisions', () => {
  it('2026-07-28 and later are modern; the 2025 revisions and nonsense are not', () => {
    expect(isModernProtocolVersion('2026-07-28')).toBe(true);
    expect(isModernProtocolVersion('2027-01-01')).toBe(true);
    for (const v of ['2025-11-25', '2025-06-18', '2024-11-05', undefined, '', 'latest', '2026-7-28', '9999']) expect(isModernProtocolVersion(v)).toBe(false);
  });

  it('reads the revision and client from a request _meta, and the server identity from a result _meta', () => {
    const params = {
      name: 'echo',
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'cursor', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    };
    expect(requestProtocolVersion(params)).toBe('2026-07-28');
    expect(requestClientName(params)).toBe('cursor');
    expect(requestClientName({ _meta: { 'io.modelcontextprotocol/clientInfo': { name: '' } } })).toBeUndefined();
    expect(requestProtocolVersion({ name: 'echo' })).toBeUndefined();
    expect(requestProtocolVersion(undefined)).toBeUndefined();
    expect(resultServerInfo({ _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'fs', version: '2' } } })).toEqual({ name: 'fs', version: '2' });
    expect(resultServerInfo({ tools: [] })).toBeUndefined();
  });
});

class FakePeer implements Peer {
  starts = 0;
  closes = 0;
  sent: JsonRpcMessage[] = [];
  onmessage?: (m: Inbound) => void;
  onclose?: (error?: Error) => void;
  constructor(private readonly fail?: Error) {}
  async start(): Promise<void> {
    this.starts++;
    if (this.fail) throw this.fail;
  }
  async send(msg: JsonRpcMessage): Promise<void> {
    this.sent.push(msg);
  }
  async close(): Promise<void> {
    this.closes++;
  }
}

describe('DeferredPeer (the server side of an HTTP session)', () => {
  it('starts the server with the first message, once, in order; closing one never started starts nothing', async () => {
    const inner = new FakePeer();
    const peer = new DeferredPeer(inner);
    await peer.start();
    expect(inner.starts).toBe(0);
    const a = { jsonrpc: '2.0', id: 1, method: 'initialize' } as JsonRpcMessage;
    const b = { jsonrpc: '2.0', method: 'notifications/initialized' } as JsonRpcMessage;
    await Promise.all([peer.send(a), peer.send(b)]);
    expect(inner.starts).toBe(1);
    expect(inner.sent).toEqual([a, b]);
    let got: Inbound | undefined;
    peer.onmessage = (m) => (got = m);
    inner.onmessage?.({ msg: { jsonrpc: '2.0', id: 1, result: {} }, kind: 'response' });
    expect(got?.kind).toBe('response');
    await peer.close();
    expect(inner.closes).toBe(1);

    const unused = new FakePeer();
    const idle = new DeferredPeer(unused);
    await idle.close();
    expect([unused.starts, unused.closes]).toEqual([0, 0]);
    await expect(idle.send(a)).rejects.toThrow(/closed/);
    expect(unused.starts).toBe(0);
  });

  it('once started, a message reaches the server synchronously; none overtakes one still waiting for the start', async () => {
    const inner = new FakePeer();
    const peer = new DeferredPeer(inner);
    const m = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' }) as JsonRpcMessage;
    const first = peer.send(m(1));
    // Sent from a microtask that may run between the start and the first message's own hop.
    const second = Promise.resolve().then(() => peer.send(m(2)));
    await Promise.all([first, second]);
    expect(inner.sent.map((x) => x.id)).toEqual([1, 2]);
    void peer.send(m(3));
    expect(inner.sent.map((x) => x.id)).toEqual([1, 2, 3]); // no promise hop: the SDK cannot write anything in between
    await peer.close();
  });

  it('a server that cannot start fails the send and is reported once', async () => {
    const reported: string[] = [];
    const peer = new DeferredPeer(new FakePeer(new Error('spawn nope ENOENT')), (err) => reported.push(err.message));
    await expect(peer.send({ jsonrpc: '2.0', id: 1, method: 'initialize' })).rejects.toThrow('ENOENT');
    await expect(peer.send({ jsonrpc: '2.0', id: 2, method: 'ping' })).rejects.toThrow('ENOENT');
    expect(reported).toEqual(['spawn nope ENOENT']);
    await peer.close();
  });
});
