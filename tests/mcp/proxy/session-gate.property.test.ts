// Property: whatever mix of messages a client sends — tool calls in any spelling, with or without
// an id, with arguments Ward cannot evaluate, interleaved with cancellations and other methods —
// every tool-call-like message the server receives is an exact `tools/call` request whose decision
// was `allow` and whose trace the sink had accepted before the message was sent to the server.
// In-process: a real ProxySession and Gatekeeper between two recording peers.
import fc from 'fast-check';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSigningKey } from '../../../src/keys/index.js';
import { parsePolicyYaml } from '../../../src/policy/index.js';
import { Gatekeeper } from '../../../src/mcp/proxy/gatekeeper.js';
import { DEFAULT_TARGET_MAPPING } from '../../../src/mcp/proxy/intent.js';
import { isToolCallMethod, messageKind, type JsonRpcMessage } from '../../../src/mcp/proxy/jsonrpc.js';
import { tempDir } from '../../cli/run.js';
import { inProcessSession, RecordingPeer } from './helpers.js';

const key = generateSigningKey();
const POLICY = parsePolicyYaml(`default_verdict: allow
rules:
  - name: no-rm
    priority: 10
    effect: block
    match: { tool_names: [rm] }
`);

/** Spellings of tools/call: case, full-width letters, invisible and blank characters, separators. */
const INVISIBLE = [' ', '\t', '\u00a0', '\u200b', '\u200c', '\u2060', '\ufeff', '\u00ad', '\u3000', '\u0000', '\r'];
const spelling = fc
  .array(
    fc.record({
      upper: fc.boolean(),
      wide: fc.boolean(),
      before: fc.option(fc.constantFrom(...INVISIBLE), { nil: undefined }),
    }),
    { minLength: 10, maxLength: 10 },
  )
  .chain((shape) =>
    fc.constantFrom('/', '.', '_', '／', '∕', '').map((sep) =>
      [...'tools/call']
        .map((c, i) => {
          const s = shape[i]!;
          let ch = c === '/' ? sep : s.upper ? c.toUpperCase() : c;
          if (s.wide && ch.length === 1 && ch >= '!' && ch <= '~') ch = String.fromCharCode(ch.charCodeAt(0) + 0xfee0);
          return (s.before ?? '') + ch;
        })
        .join(''),
    ),
  );

const method = fc.oneof(
  { weight: 3, arbitrary: fc.constant('tools/call') },
  { weight: 4, arbitrary: spelling },
  { weight: 1, arbitrary: fc.constantFrom('tools/list', 'ping', 'resources/read', 'prompts/get') },
);

const args = fc.oneof(
  fc.record({ path: fc.constantFrom('a.txt', '../../etc/shadow', '/etc/passwd') }),
  fc.constant({ path: 'x', n: Infinity }),
  fc.constant(JSON.parse(`{"deep":${'['.repeat(150)}1${']'.repeat(150)}}`) as Record<string, unknown>),
);

const message = fc.record({
  method,
  withId: fc.boolean(),
  tool: fc.constantFrom('echo', 'rm', 'write_file'),
  args,
  cancelAfter: fc.boolean(),
});

describe('ProxySession: nothing reaches the server undecided (property)', () => {
  it('every generated spelling of tools/call folds to it', () => {
    fc.assert(fc.property(spelling, (m) => isToolCallMethod(m)), { numRuns: 500 });
  });

  it('only exact, allowed, traced tools/call requests reach the server', async () => {
    const dir = tempDir('ward-mcp-prop-');
    await fc.assert(
      fc.asyncProperty(fc.array(message, { minLength: 1, maxLength: 12 }), fc.boolean(), async (msgs, slowSink) => {
        const accepted = new Map<string, Record<string, unknown>>(); // correlation id → trace, once accepted
        const pendingWrites: (() => void)[] = [];
        const gate = new Gatekeeper({
          runtime: { policy: POLICY, signingKey: key, traceFormat: 'ward', traceDir: dir, rateLimitStatePath: join(dir, 'rl.json'), profile: 'standard' },
          sink: {
            write: (t) =>
              new Promise<string>((resolve) => {
                const accept = () => {
                  accepted.set(String((t as Record<string, unknown>)['correlation_id']), t as Record<string, unknown>);
                  resolve('mem');
                };
                if (slowSink) pendingWrites.push(accept);
                else accept();
              }),
            close: async () => undefined,
          },
          mapping: { toolPrefix: '', targets: DEFAULT_TARGET_MAPPING, argSource: 'tool_output', workspace: dir, riskClass: 'high' },
          approvalDir: join(dir, 'approvals'),
          approvalKeys: [key],
        });
        const violations: string[] = [];
        const server = new RecordingPeer((m) => {
          // Checked at the moment of sending: the call's trace must already be accepted, and allow.
          if (m.method === 'resources/read' || m.method === 'prompts/get') {
            // Methods that read are decided too: forwarded only allowed, with the trace accepted first.
            const t = accepted.get(`s:${String(m.id)}`);
            if (t?.['verdict'] !== 'allow') violations.push(`${m.method} ${String(m.id)} forwarded without an accepted allow trace`);
            return;
          }
          if (typeof m.method !== 'string' || !isToolCallMethod(m.method)) return;
          if (m.method !== 'tools/call' || m.id === undefined) return void violations.push(`undecided ${JSON.stringify(m.method)} id=${String(m.id)}`);
          const t = accepted.get(`s:${String(m.id)}`);
          if (!t) return void violations.push(`no accepted trace for ${String(m.id)}`);
          if (t['verdict'] !== 'allow') violations.push(`trace for ${String(m.id)} is ${String(t['verdict'])}`);
        });
        const client = new RecordingPeer();
        const session = inProcessSession({ client, server, gate, sessionId: 's', approvalDir: join(dir, 'approvals') });
        await session.start();
        msgs.forEach((g, i) => {
          const msg: JsonRpcMessage = { jsonrpc: '2.0', method: g.method, params: { name: g.tool, arguments: g.args } };
          if (g.withId) msg.id = i;
          client.onmessage!({ msg, kind: messageKind(msg)!, raw: Buffer.from(JSON.stringify(msg)) });
          if (g.cancelAfter && g.withId) {
            const cancel: JsonRpcMessage = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: i } };
            client.onmessage!({ msg: cancel, kind: 'notification' });
          }
        });
        for (let round = 0; round < 5; round++) {
          for (const accept of pendingWrites.splice(0)) accept();
          await new Promise((r) => setImmediate(r));
        }
        expect(violations).toEqual([]);
        // Every request is either forwarded or answered by Ward, never both; tool calls in another
        // spelling are answered with -32601; a call cancelled while it waits for its trace is neither.
        for (const [i, g] of msgs.entries()) {
          if (!g.withId) continue;
          const forwarded = server.sent.filter((m) => m.id === i).length;
          const answers = client.sent.filter((m) => m.id === i);
          if (!isToolCallMethod(g.method)) {
            // Plumbing is forwarded; a method that reads is forwarded when allowed, else answered
            // (or neither, when cancelled while its trace was being written).
            if (g.cancelAfter) expect(forwarded + answers.length, `message ${i}`).toBeLessThanOrEqual(1);
            else expect(forwarded + answers.length, `message ${i}`).toBe(1);
            if (g.method === 'tools/list' || g.method === 'ping') expect(forwarded, `message ${i}`).toBe(1);
          } else if (g.method !== 'tools/call') {
            expect(forwarded, `message ${i}`).toBe(0);
            expect(answers.map((a) => (a.error as { code?: number } | undefined)?.code)).toEqual([-32601]);
          } else if (g.cancelAfter) {
            expect(forwarded, `message ${i}`).toBe(0);
            expect(answers.length).toBeLessThanOrEqual(1); // a block is still answered
          } else {
            expect(forwarded + answers.length, `message ${i}`).toBe(1);
          }
        }
        await session.end();
      }),
      { numRuns: 150 },
    );
  });
});
