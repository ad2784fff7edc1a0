// Availability (issue 27, finding 7): on `--listen` a large call is decided on the decision thread
// (src/mcp/proxy/decision-thread.ts) so other sessions are not held while it is. Checked here: the
// thread decides exactly as the inline path does (verdict, digests, trace, signature), follows a
// policy reload, fails closed when it cannot answer; a session holds its own later messages
// while its large call is decided off the loop (order kept) and another session is answered
// meanwhile (deterministic: the thread's answer is held by the test); and over a real `--listen`
// proxy a worst-case call and a small one from another session both get correct answers.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { formatRFC3339Nano, nowUTC, type JsonObject } from '../../../src/canon/index.js';
import { isWardError } from '../../../src/errors.js';
import { generateSigningKey } from '../../../src/keys/index.js';
import { parsePolicyYaml } from '../../../src/policy/index.js';
import { verifyTraceRecord } from '../../../src/trace/index.js';
import { decideSignedCall, type CallDecisionConfig, type SignedCallDecision } from '../../../src/mcp/proxy/call-decision.js';
import { DecisionThread, DecisionThreadError, type DecisionJob } from '../../../src/mcp/proxy/decision-thread.js';
import { Gatekeeper } from '../../../src/mcp/proxy/gatekeeper.js';
import { DEFAULT_TARGET_MAPPING, type CallInput } from '../../../src/mcp/proxy/intent.js';
import { messageKind, type JsonRpcMessage } from '../../../src/mcp/proxy/jsonrpc.js';
import { OFF_LOOP_THRESHOLD, checkRequest, DEFAULT_REQUEST_LIMITS } from '../../../src/mcp/proxy/limits.js';
import type { LoadedPolicy } from '../../../src/policy/types.js';
import { REPO, tempDir, WARD } from '../../cli/run.js';
import { inProcessSession, RecordingPeer, startListening, stopListeners } from './helpers.js';

// The worker runs the built module (a worker thread cannot load TypeScript); tests/cli builds it.
const WORKER = pathToFileURL(join(REPO, 'dist', 'mcp', 'proxy', 'decision-worker.js'));
const TINY = join(REPO, 'fixtures', 'mcp', 'tiny-server.mjs');

const key = generateSigningKey();
const POLICY = `default_verdict: allow
rules:
  - name: no-rm
    priority: 10
    effect: block
    match: { tool_names: [rm] }
  - name: ask-deploy
    priority: 20
    effect: require_approval
    match: { tool_names: [deploy] }
`;
const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));

function config(dir: string, yaml = POLICY): CallDecisionConfig {
  return {
    runtime: { policy: parsePolicyYaml(yaml), signingKey: key, traceFormat: 'ward', traceDir: dir, rateLimitStatePath: join(dir, 'rl.json'), profile: 'standard', pathResolution: 'filesystem' },
    mapping: { toolPrefix: '', targets: DEFAULT_TARGET_MAPPING, argSource: 'user', workspace: dir, riskClass: 'high' },
    approvalDir: join(dir, 'approvals'),
    approvalKeys: [key],
  };
}

function callOf(name: string, args: JsonObject, extra: Partial<CallInput> = {}): CallInput {
  return { name, arguments: args, sessionId: 's', runId: 'mcp_s', clientName: 'c', createdAt: formatRFC3339Nano(nowUTC()), ...extra };
}

/** Members of two decisions that differ (trace members by name; the rest as a whole). */
function differing(a: SignedCallDecision, b: SignedCallDecision): string[] {
  const out: string[] = [];
  for (const k of new Set([...Object.keys(a.trace), ...Object.keys(b.trace)])) {
    if (JSON.stringify(a.trace[k]) !== JSON.stringify(b.trace[k])) out.push(`trace.${k}`);
  }
  const rest = (d: SignedCallDecision) => JSON.stringify({ ...d, trace: undefined });
  if (rest(a) !== rest(b)) out.push('decision');
  return out;
}

describe('decision thread', () => {
  const threads: DecisionThread[] = [];
  afterEach(async () => {
    for (const t of threads.splice(0)) await t.close();
    stopListeners();
  });
  const thread = (cfg: CallDecisionConfig, opts: ConstructorParameters<typeof DecisionThread>[1] = {}) => {
    const t = new DecisionThread(cfg, { workerUrl: WORKER, ...opts });
    threads.push(t);
    return t;
  };

  it('decides a call exactly as the inline path does: verdict, digests, decided intent, trace (signed with the same key)', async () => {
    const dir = tempDir('ward-thread-');
    const cfg = config(dir);
    const t = thread(cfg);
    const calls: CallInput[] = [
      callOf('echo', { text: 'x', ...keys(2045) }),
      callOf('write_file', { path: join(dir, 'a.txt'), content: 'y'.repeat(100_000) }),
      callOf('rm', { path: '/data' }),
      callOf('deploy', { env: 'prod' }),
      callOf('wipe', { path: '/x' }, { hints: { destructiveHint: true }, witnessed: new Map([['path', 'trace-1']]) }),
    ];
    for (const call of calls) {
      const job: DecisionJob = { call, correlationId: 'c', opts: {}, killSwitch: undefined };
      const [inlineA, inlineB] = [decideSignedCall(cfg, call, 'c', {}, undefined), decideSignedCall(cfg, call, 'c', {}, undefined)];
      const offLoop = await t.decide(cfg.runtime.policy, job);
      // What differs between two inline decisions of one call (ids, times, latency, signature) may
      // differ off the loop too; nothing else may.
      const variable = differing(inlineA, inlineB);
      expect(variable, call.name).not.toContain('trace.intent_digest');
      expect(differing(inlineA, offLoop).filter((k) => !variable.includes(k)), call.name).toEqual([]);
      expect(offLoop.trace['verdict']).toBe(inlineA.trace['verdict']);
      expect(offLoop.trace['intent_digest']).toBe(inlineA.trace['intent_digest']);
      expect(offLoop.decided).toEqual(inlineA.decided);
      expect(verifyTraceRecord(offLoop.trace, [key]).signature_status).toBe('verified');
    }
    expect((await t.decide(cfg.runtime.policy, { call: calls[2]!, correlationId: 'c', opts: {}, killSwitch: undefined })).trace['verdict']).toBe('block');
    expect((await t.decide(cfg.runtime.policy, { call: calls[3]!, correlationId: 'c', opts: { denied: true }, killSwitch: undefined })).trace['reason_codes']).toContain('approval_denied');
  });

  it('decides with the policy in force when the call is handed over (a reload reaches the thread)', async () => {
    const dir = tempDir('ward-thread-');
    const cfg = config(dir);
    const t = thread(cfg);
    const call = callOf('echo', { text: 'x' });
    const job: DecisionJob = { call, correlationId: 'c', opts: {}, killSwitch: undefined };
    expect((await t.decide(cfg.runtime.policy, job)).trace['verdict']).toBe('allow');
    const strict: LoadedPolicy = parsePolicyYaml('default_verdict: block\nrules: []\n');
    const blocked = await t.decide(strict, job);
    expect(blocked.trace['verdict']).toBe('block');
    expect(blocked.trace['policy_digest']).toBe(strict.digest);
    expect((await t.decide(cfg.runtime.policy, job)).trace['policy_digest']).toBe(cfg.runtime.policy.digest);
  });

  it('an error the decision throws comes back with its code; a thread that cannot answer fails the call closed', async () => {
    const dir = tempDir('ward-thread-');
    const cfg = config(dir);
    const err = await thread(cfg)
      .decide(cfg.runtime.policy, { call: callOf('echo', { n: Infinity }), correlationId: 'c', opts: {}, killSwitch: undefined })
      .catch((e: unknown) => e);
    expect(isWardError(err)).toBe(true);
    expect(err).not.toBeInstanceOf(DecisionThreadError);
    expect(() => decideSignedCall(cfg, callOf('echo', { n: Infinity }), 'c', {}, undefined)).toThrow((err as Error).message);
    // A worker that never answers: the deadline fails the call; one that exits fails it at once.
    const silent = join(dir, 'silent.mjs');
    writeFileSync(silent, "import { parentPort } from 'node:worker_threads'; parentPort.on('message', () => {});\n");
    const job: DecisionJob = { call: callOf('echo', {}), correlationId: 'c', opts: {}, killSwitch: undefined };
    await expect(thread(cfg, { workerUrl: pathToFileURL(silent), timeoutMs: 200 }).decide(cfg.runtime.policy, job)).rejects.toBeInstanceOf(DecisionThreadError);
    const dying = join(dir, 'dying.mjs');
    writeFileSync(dying, "import { parentPort } from 'node:worker_threads'; parentPort.on('message', () => process.exit(3));\n");
    const t = thread(cfg, { workerUrl: pathToFileURL(dying) });
    await expect(t.decide(cfg.runtime.policy, job)).rejects.toThrow(/exited/);
    await t.close();
    await expect(t.decide(cfg.runtime.policy, job)).rejects.toThrow(/closed/);
  });

  it('calls past OFF_LOOP_THRESHOLD (keys or characters) go off the loop; small ones do not', () => {
    const lim = DEFAULT_REQUEST_LIMITS;
    expect(checkRequest({ name: 'echo', arguments: { text: 'hi' } }, 60, lim)).toEqual({ offLoop: false });
    expect(checkRequest({ name: 'echo', arguments: keys(OFF_LOOP_THRESHOLD.entries) }, undefined, lim).offLoop).toBe(true);
    expect(checkRequest({ name: 'echo', arguments: { text: 'y'.repeat(OFF_LOOP_THRESHOLD.chars + 1) } }, undefined, lim).offLoop).toBe(true);
    expect(checkRequest({ name: 'echo', arguments: { list: ['z'.repeat(OFF_LOOP_THRESHOLD.chars)] } }, undefined, lim).offLoop).toBe(true);
    expect(checkRequest({ name: 'echo', arguments: keys(lim.maxKeys + 1) }, undefined, lim).over).toContain('--max-call-keys');
  });
});

/** A decision thread whose answers the test releases: it decides inline, but resolves only on release(). */
class HeldThread {
  readonly jobs: { job: DecisionJob; release: () => void }[] = [];
  constructor(private readonly cfg: CallDecisionConfig) {}
  decide(policy: LoadedPolicy, job: DecisionJob): Promise<SignedCallDecision> {
    return new Promise((resolve, reject) => {
      this.jobs.push({
        job,
        release: () => {
          try {
            resolve(decideSignedCall({ ...this.cfg, runtime: { ...this.cfg.runtime, policy } }, job.call, job.correlationId, job.opts, job.killSwitch));
          } catch (err) {
            reject(err);
          }
        },
      });
    });
  }
}

describe('a session whose large call is decided off the loop', () => {
  it('answers another session meanwhile, and handles its own later messages only after the large call, in order', async () => {
    const dir = tempDir('ward-thread-session-');
    const cfg = config(dir);
    const held = new HeldThread(cfg);
    const accepted = new Set<string>(); // correlation ids whose trace the sink accepted
    const gate = new Gatekeeper({
      ...cfg,
      sink: {
        write: async (t) => {
          accepted.add(String((t as Record<string, unknown>)['correlation_id']));
          return 'mem';
        },
        close: async () => undefined,
      },
      thread: held as unknown as DecisionThread,
    });
    const open = async (id: string) => {
      // The server echoes each forwarded call; it checks that the call's trace was accepted first.
      const unTraced: string[] = [];
      const server: RecordingPeer = new RecordingPeer((m) => {
        if (m.method !== 'tools/call' && m.method !== 'ping' && m.method !== 'resources/read') return;
        if (m.method === 'tools/call' && !accepted.has(`${id}:${String(m.id)}`)) unTraced.push(String(m.id));
        queueMicrotask(() => server.onmessage!({ kind: 'response', msg: { jsonrpc: '2.0', id: m.id!, result: { content: [{ type: 'text', text: `ok ${String(m.id)}` }] } } }));
      });
      const client = new RecordingPeer();
      const session = inProcessSession({ client, server, gate, sessionId: id, approvalDir: cfg.approvalDir });
      await session.start();
      const send = (msg: JsonRpcMessage) => client.onmessage!({ msg, kind: messageKind(msg)! });
      return { session, client, server, send, unTraced };
    };
    const attacker = await open('a');
    const victim = await open('v');
    attacker.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'big', ...keys(2000) } } });
    attacker.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'small' } } });
    attacker.send({ jsonrpc: '2.0', id: 3, method: 'ping' });
    // A method that reads is decided off the loop too when its params are large.
    attacker.send({ jsonrpc: '2.0', id: 4, method: 'resources/read', params: { uri: 'file:///notes.txt', pad: keys(300) } });
    victim.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'victim' } } });
    // The victim's call is decided inline, forwarded and answered while the large call waits on the thread.
    const answered = await victim.client.next((m) => m.id === 1);
    expect(JSON.stringify(answered.result)).toContain('ok 1');
    expect(held.jobs.map((j) => j.job.call.arguments['text'])).toEqual(['big']);
    // Nothing of the attacker's session moved: its later call and its ping wait behind the large call.
    expect(attacker.server.sent).toEqual([]);
    expect(attacker.client.sent).toEqual([]);
    expect(attacker.session.idleSince()).toBeUndefined();
    held.jobs[0]!.release();
    const answers = await Promise.all([1, 2, 3].map((id) => attacker.client.next((m) => m.id === id)));
    expect(answers.map((m) => JSON.stringify(m.result))).toEqual([expect.stringContaining('ok 1'), expect.stringContaining('ok 2'), expect.stringContaining('ok 3')]);
    expect(held.jobs.map((j) => j.job.call.method?.intentName ?? j.job.call.name)).toEqual(['echo', 'mcp.resource.read']);
    expect(attacker.server.sent.some((m) => m.method === 'resources/read')).toBe(false);
    held.jobs[1]!.release();
    expect(JSON.stringify((await attacker.client.next((m) => m.id === 4)).result)).toContain('ok 4');
    // Decided in the order the client sent them, each call forwarded only once its trace was
    // accepted (so the ping, which needs no trace, may pass them, as it does inline).
    expect(attacker.server.sent.filter((m) => m.method === 'tools/call').map((m) => m.id)).toEqual([1, 2]);
    expect(attacker.server.sent.filter((m) => m.method === 'ping').map((m) => m.id)).toEqual([3]);
    expect(attacker.unTraced).toEqual([]);
    expect(victim.unTraced).toEqual([]);
    await Promise.all([attacker.session.end(), victim.session.end()]);
  });

  it('a thread that cannot answer: the large call gets -32603 and is not forwarded; the session goes on', async () => {
    const dir = tempDir('ward-thread-session-');
    const cfg = config(dir);
    const failing = { decide: () => Promise.reject(new DecisionThreadError('the decision thread exited (1)')) };
    const gate = new Gatekeeper({ ...cfg, sink: { write: async () => 'mem', close: async () => undefined }, thread: failing as unknown as DecisionThread });
    const server: RecordingPeer = new RecordingPeer((m) => {
      if (m.method === 'tools/call') queueMicrotask(() => server.onmessage!({ kind: 'response', msg: { jsonrpc: '2.0', id: m.id!, result: { content: [] } } }));
    });
    const client = new RecordingPeer();
    const session = inProcessSession({ client, server, gate, sessionId: 's', approvalDir: cfg.approvalDir });
    await session.start();
    const send = (msg: JsonRpcMessage) => client.onmessage!({ msg, kind: messageKind(msg)! });
    send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: keys(1000) } });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'small' } } });
    const [r1, r2] = await Promise.all([client.next((m) => m.id === 1), client.next((m) => m.id === 2)]);
    expect((r1.error as { code: number; message: string }).code).toBe(-32603);
    expect((r1.error as { message: string }).message).toContain('not forwarded');
    expect(r2.result).toBeDefined();
    expect(server.sent.filter((m) => m.method === 'tools/call').map((m) => m.id)).toEqual([2]);
    await session.end();
  });
  it("a client's roots answer is bounded like a request, and a large one decided off the loop", async () => {
    const dir = tempDir('ward-thread-session-');
    const cfg = config(dir);
    const held = new HeldThread(cfg);
    const gate = new Gatekeeper({ ...cfg, sink: { write: async () => 'mem', close: async () => undefined }, thread: held as unknown as DecisionThread });
    const server = new RecordingPeer();
    const client = new RecordingPeer();
    const session = inProcessSession({ client, server, gate, sessionId: 's', approvalDir: cfg.approvalDir });
    await session.start();
    const roots = (n: number) => ({ roots: Array.from({ length: n }, (_, i) => ({ uri: `file:///srv/r${i}`, name: `r${i}` })) });
    const asked = () => client.sent.filter((m) => m.method === 'roots/list');
    /** The server asks the client for its roots; resolves with the id the client sees. */
    const ask = async (id: string) => {
      const before = asked().length;
      server.onmessage!({ kind: 'request', msg: { jsonrpc: '2.0', id, method: 'roots/list' } });
      await client.next(() => asked().length > before);
      return asked().at(-1)!.id!;
    };
    // Over --max-call-keys (2,048): the server gets -32064 instead, nothing is decided.
    const tooMany = await ask('r1');
    client.onmessage!({ kind: 'response', msg: { jsonrpc: '2.0', id: tooMany, result: roots(1500) } });
    const refused = await server.next((m) => m.id === 'r1');
    expect((refused.error as { code: number }).code).toBe(-32064);
    expect(held.jobs).toHaveLength(0);
    // Past the threshold: decided on the thread; the server gets the answer once it is decided.
    const large = await ask('r2');
    client.onmessage!({ kind: 'response', msg: { jsonrpc: '2.0', id: large, result: roots(200) } });
    expect(held.jobs.map((j) => j.job.call.method?.intentName)).toEqual(['mcp.roots.list']);
    expect(server.sent.some((m) => m.id === 'r2')).toBe(false);
    held.jobs[0]!.release();
    const answered = await server.next((m) => m.id === 'r2');
    expect((answered.result as { roots: unknown[] }).roots).toHaveLength(200);
    await session.end();
  });
});

describe('--listen: the worst allowed call and another session', () => {
  afterEach(() => stopListeners());

  it('both get correct answers, both are traced, and the server received both', async () => {
    const cwd = tempDir('ward-thread-listen-');
    writeFileSync(join(cwd, 'policy.yaml'), 'default_verdict: allow\nrules: []\n');
    const log = join(cwd, 'server.log');
    writeFileSync(log, '');
    const state = join(cwd, '.ward');
    const p = startListening(cwd, [WARD, 'mcp', 'proxy', '--policy', 'policy.yaml', '--state-dir', state, '--trace-sink', 'file', '--listen', '127.0.0.1:0', '--', process.execPath, TINY], { TINY_SERVER_LOG: log });
    const url = await p.url;
    const open = async () => {
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const post = async (msg: unknown) => {
        const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(msg) });
        const sid = res.headers.get('mcp-session-id');
        if (sid) headers['mcp-session-id'] = sid;
        return res.text();
      };
      await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
      await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
      return post;
    };
    const [attacker, victim] = [await open(), await open()];
    const big = { text: 'big', ...keys(DEFAULT_REQUEST_LIMITS.maxKeys - 3) }; // 2,048 entries in params with name and arguments
    const [bigReply, ...victimReplies] = await Promise.all([
      attacker({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: big } }),
      ...[1, 2, 3].map((i) => victim({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { text: `victim ${i}` } } })),
    ]);
    expect(bigReply).toContain('echo: big');
    victimReplies.forEach((r, i) => expect(r).toContain(`echo: victim ${i + 1}`));
    const received = readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { arguments: Record<string, unknown> });
    expect(received.map((r) => r.arguments['text']).sort()).toEqual(['big', 'victim 1', 'victim 2', 'victim 3']);
    // Every call was decided and traced (`--trace-sink file`: the file is written before the call is forwarded).
    const traceDir = join(state, 'traces');
    const traces = readdirSync(traceDir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => JSON.parse(readFileSync(join(traceDir, f), 'utf8')) as Record<string, unknown>)
      .filter((t) => t['tool_name'] === 'echo');
    expect(traces.map((t) => t['verdict'])).toEqual(['allow', 'allow', 'allow', 'allow']);
  });
});
