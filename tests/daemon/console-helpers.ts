import { sign } from 'node:crypto';
import { get as httpGet } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon, type Daemon } from '../../src/daemon/index.js';
import { generateSigningKey, publicJwk, type SigningKey } from '../../src/keys/index.js';
import { tempDir } from '../cli/run.js';
import { call, type Reply } from './helpers.js';

/** Writes need one approval; deletes two distinct approvers; everything else is allowed. */
export const CONSOLE_POLICY = `schema_id: gait.gate.policy
schema_version: 1.0.0
default_verdict: allow
rules:
  - name: approve-writes
    priority: 10
    effect: require_approval
    match:
      tool_names: [fs.write_file]
  - name: two-for-deletes
    priority: 10
    effect: require_approval
    min_approvals: 2
    match:
      tool_names: [fs.delete_file]
  - name: block-exec
    priority: 5
    effect: block
    match:
      tool_names: [proc.exec]
`;

export function intentFor(tool: string, path: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schema_id: 'gait.gate.intent_request',
    schema_version: '1.0.0',
    created_at: '2026-11-21T09:02:00Z',
    producer_version: 'console-test',
    tool_name: tool,
    args: { path, content: 'secret-value-123' },
    targets: [{ kind: 'path', value: path, operation: 'write' }],
    arg_provenance: [{ arg_path: '$.path', source: 'user' }],
    context: { identity: 'agent.alpha', workspace: '/workspace', risk_class: 'low', session_id: 's1', agent_id: 'agent-7' },
    ...extra,
  };
}

export interface Approver {
  name: string;
  key: SigningKey;
}

export interface ConsoleDaemon {
  d: Daemon;
  dir: string;
  state: string;
  approversFile: string;
  alice: Approver;
  bob: Approver;
  mallory: Approver;
}

const open: Daemon[] = [];
export async function closeAll(): Promise<void> {
  for (const d of open.splice(0)) await d.close();
}

/** A daemon with alice and bob as registered approvers (mallory's key is not registered). */
export async function consoleDaemon(extra: Partial<Parameters<typeof startDaemon>[0]> = {}, policy = CONSOLE_POLICY): Promise<ConsoleDaemon> {
  const dir = tempDir('ward-console-');
  const state = join(dir, '.ward');
  mkdirSync(state, { recursive: true });
  writeFileSync(join(dir, 'policy.yaml'), policy);
  const alice = { name: 'alice', key: generateSigningKey() };
  const bob = { name: 'bob', key: generateSigningKey() };
  const mallory = { name: 'mallory', key: generateSigningKey() };
  const approversFile = join(dir, 'approvers.jwks');
  writeFileSync(approversFile, JSON.stringify({ keys: [alice, bob].map((a) => ({ ...publicJwk(a.key), ward_approver: a.name })) }));
  const d = await startDaemon({ stateDir: state, policyPath: join(dir, 'policy.yaml'), host: '127.0.0.1', port: 0, signingKey: generateSigningKey(), logWrite: () => {}, approverKeysPath: approversFile, ingestIntervalMs: 0, ...extra });
  open.push(d);
  return { d, dir, state, approversFile, alice, bob, mallory };
}

export async function evalIntent(url: string, intent: Record<string, unknown>, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<Reply> {
  return call(url, '/v1/gate/eval', { body: { intent, ...extra }, headers });
}

/** What the browser does: fetch the template, sign bytes_to_sign with Ed25519, send payload, key id and signature. */
export async function signTemplate(url: string, id: string, who: Approver, opts: { kind?: 'approval' | 'denial'; reason?: string; headers?: Record<string, string> } = {}): Promise<{ payload: Record<string, unknown>; key_id: string; sig: string }> {
  const kind = opts.kind ?? 'approval';
  const q = new URLSearchParams({ approver: who.name, ...(kind === 'denial' ? { kind, reason: opts.reason ?? 'not today' } : opts.reason ? { reason: opts.reason } : {}) });
  const t = await call(url, `/v1/approvals/${id}/token-template?${q}`, { headers: opts.headers ?? {} });
  if (t.status !== 200) throw new Error(`template: ${t.status} ${t.text}`);
  const sig = sign(null, Buffer.from(t.json.bytes_to_sign, 'base64'), who.key.privateKey).toString('base64');
  return { payload: t.json.payload, key_id: who.key.keyId, sig };
}

/** A report as an MCP proxy sends it: the intent and the digest of the policy it decided under (the daemon's). */
export async function reportOf(url: string, intent: Record<string, unknown>, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const policy = await call(url, '/v1/console/policy', { headers });
  if (policy.status !== 200) throw new Error(`policy: ${policy.status} ${policy.text}`);
  return { intent, policy_digest: policy.json.policy_digest, ...extra };
}

export async function pendingFor(url: string, tool: string, headers: Record<string, string> = {}): Promise<any> {
  const list = await call(url, '/v1/approvals', { headers });
  return list.json.entries.find((e: any) => e.tool_name === tool);
}

export interface SseEvent {
  event: string;
  id?: string;
  data: any;
}

/** A minimal SSE client (what EventSource does): parses events as they arrive. */
export function openStream(url: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; events: SseEvent[]; next(pred: (e: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = httpGet(url + path, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      const events: SseEvent[] = [];
      const waiters: { pred: (e: SseEvent) => boolean; done: (e: SseEvent) => void }[] = [];
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const e: SseEvent = { event: 'message', data: undefined };
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':') || line === '') continue;
            const [k, ...rest] = line.split(':');
            const v = rest.join(':').replace(/^ /, '');
            if (k === 'event') e.event = v;
            else if (k === 'id') e.id = v;
            else if (k === 'data') data.push(v);
          }
          if (data.length === 0) continue;
          e.data = JSON.parse(data.join('\n'));
          events.push(e);
          for (const w of waiters.splice(0)) (w.pred(e) ? w.done(e) : waiters.push(w));
        }
      });
      resolve({
        status: res.statusCode ?? 0,
        events,
        next: (pred, timeoutMs = 5000) =>
          new Promise((done, fail) => {
            const seen = events.find(pred);
            if (seen) return done(seen);
            const timer = setTimeout(() => fail(new Error('no matching event')), timeoutMs);
            waiters.push({ pred, done: (e) => (clearTimeout(timer), done(e)) });
          }),
        close: () => req.destroy(),
      });
    });
    req.on('error', (err) => {
      if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err);
    });
  });
}
