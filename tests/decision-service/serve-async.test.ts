import { createServer, request, type Server } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadOrCreateDefaultKey } from '../../src/keys/index.js';
import { loadServiceConfig } from '../../src/decision-service/config.js';
import { DecisionTraceWriter, type PendingDecisionResult } from '../../src/decision-service/evaluate.js';
import { createMcpServeListener } from '../../src/decision-service/http.js';
import { startMcpServe } from '../../src/cli/commands/mcp-serve.js';
import { verifyTraceText } from '../../src/trace/verify.js';
import { tempDir } from '../cli/run.js';
import { compat, inProcess, POLICY } from './helpers.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => { s.closeAllConnections(); s.close(r); })));
});

interface Reply {
  status: number;
  body: string;
}

function post(port: number, path: string, body?: unknown, method = 'POST'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(JSON.stringify(body));
    req.end();
  });
}

const call = (name: string) => JSON.parse(readFileSync(compat(name), 'utf8')) as Record<string, unknown>;

describe('mcp serve writes traces asynchronously, answering only once they are durable', () => {
  it('many concurrent /v1/evaluate requests all get answers whose traces exist and verify', async () => {
    const cwd = tempDir('ward-mcp-serve-async-');
    const p = inProcess(cwd);
    const { server, address } = await startMcpServe(p.ctx, { policy: POLICY, listen: '127.0.0.1:0', authMode: 'off', maxRequestBytes: String(1 << 20), httpVerdictStatus: 'compat' });
    servers.push(server);
    const bodies = [
      { call: call('call-mcp-read.json') },
      { call: call('call-mcp-write.json'), run_id: 'same' },
      { adapter: 'claude_code', call: call('call-claude-code.json'), run_id: 'same' },
      { adapter: 'openai', call: call('call-openai.json') },
    ];
    const N = 96;
    const replies = await Promise.all(Array.from({ length: N }, (_, i) => post(address.port, i % 3 === 0 ? '/v1/evaluate/stream' : '/v1/evaluate', bodies[i % bodies.length])));
    const key = loadOrCreateDefaultKey(join(cwd, '.ward')).key;
    const paths = new Set<string>();
    for (const r of replies) {
      expect(r.status).toBe(200);
      const d = JSON.parse(r.body.trim()) as Record<string, unknown>;
      expect(d['ok']).toBe(true);
      const path = String(d['trace_path']);
      expect(path.startsWith(join(cwd, '.ward', 'traces'))).toBe(true);
      expect(existsSync(path)).toBe(true);
      paths.add(path);
      const check = verifyTraceText(readFileSync(path, 'utf8'), [key]);
      expect(check.ok, check.error).toBe(true);
      expect(check.trace_id).toBe(d['trace_id']);
      expect(check.verdict).toBe(d['verdict']);
    }
    expect(paths.size).toBe(N); // never overwritten, even with equal run ids and timestamps
  });

  it('a decision whose trace write is slow is not answered before it; other requests are served meanwhile', async () => {
    const cwd = tempDir('ward-mcp-serve-slow-');
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let holds = 1;
    const written: string[] = [];
    class SlowWriter extends DecisionTraceWriter {
      override async write(pending: PendingDecisionResult): Promise<string> {
        if (holds-- > 0) await held;
        const path = await super.write(pending);
        written.push(path);
        return path;
      }
    }
    const config = loadServiceConfig({ policy: POLICY, stateDir: join(cwd, '.ward'), cwd, env: process.env, serve: true });
    const server = createServer(createMcpServeListener({ config, traceWriter: new SlowWriter() }));
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;

    let slowAnswered = false;
    const slow = post(port, '/v1/evaluate', { call: call('call-mcp-write.json') }).then((r) => {
      slowAnswered = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 50));
    // Meanwhile: the health check and another decision are answered, the held one is not.
    expect((await post(port, '/healthz', undefined, 'GET')).status).toBe(200);
    const other = JSON.parse((await post(port, '/v1/evaluate', { call: call('call-mcp-read.json') })).body) as Record<string, unknown>;
    expect(other['verdict']).toBe('allow');
    expect(existsSync(String(other['trace_path']))).toBe(true);
    expect(slowAnswered).toBe(false);
    expect(written).toEqual([other['trace_path']]);

    release();
    const r = await slow;
    const d = JSON.parse(r.body) as Record<string, unknown>;
    expect(d['verdict']).toBe('require_approval');
    expect(written).toEqual([other['trace_path'], d['trace_path']]);
    expect(existsSync(String(d['trace_path']))).toBe(true);
  });

  it('a trace that cannot be written is an error answer, never a decision', async () => {
    const cwd = tempDir('ward-mcp-serve-fail-');
    class FailingWriter extends DecisionTraceWriter {
      override async write(): Promise<string> {
        throw new Error('disk full');
      }
    }
    const config = loadServiceConfig({ policy: POLICY, stateDir: join(cwd, '.ward'), cwd, env: process.env, serve: true });
    const server = createServer(createMcpServeListener({ config, traceWriter: new FailingWriter() }));
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const r = await post((server.address() as AddressInfo).port, '/v1/evaluate', { call: call('call-mcp-read.json') });
    expect([r.status, JSON.parse(r.body)]).toEqual([400, { ok: false, error: 'disk full' }]);
  });
});
