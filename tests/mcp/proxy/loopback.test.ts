import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../cli/run.js';
import { connect, node, traceFiles, writePolicy } from './helpers.js';

/*
 * Issue 26, finding 4, through `ward mcp proxy`, asserting the effect: an MCP server whose tool
 * really fetches the URL it is given. Under a policy denying 127.0.0.1, `http://0:<port>/`
 * (which reaches 127.0.0.1) never reaches the local HTTP server; the control shows it would.
 */

const FETCH_SERVER = fileURLToPath(new URL('./fetch-server.mjs', import.meta.url));
let http: Server;
let port: number;
const received: string[] = [];

beforeAll(async () => {
  http = createServer((req, res) => {
    received.push(req.url ?? '');
    res.end('local secret');
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  port = (http.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => http.close(() => resolve())));

const policy = (denylist: string) => `default_verdict: allow
rules:
  - name: net
    effect: allow
    match: { target_kinds: [url] }
    endpoint:
      domain_denylist: ${denylist}
`;

async function fetchThroughProxy(denylist: string, url: string): Promise<{ text: string; isError: boolean; traces: number }> {
  const cwd = tempDir('ward-proxy-loopback-');
  const policyPath = writePolicy(cwd, policy(denylist));
  const c = await connect(node(FETCH_SERVER), { cwd, ward: ['--policy', policyPath, '--state-dir', join(cwd, '.ward')] });
  let r: { content: { text: string }[]; isError?: boolean };
  try {
    r = (await c.client.callTool({ name: 'fetch_url', arguments: { url } })) as typeof r;
  } finally {
    await c.close();
  }
  // The proxy's journal publishes trace files by the time it has exited.
  return { text: r.content.map((x) => x.text).join(''), isError: r.isError === true, traces: traceFiles(cwd).length };
}

describe('ward mcp proxy: loopback spellings, by effect', () => {
  it('the control: a names-only denylist lets http://0:<port>/ through, and it reaches 127.0.0.1', async () => {
    received.length = 0;
    const r = await fetchThroughProxy('[pastebin.com]', `http://0:${port}/control`);
    expect(r.text).toBe('local secret');
    expect(received).toEqual(['/control']);
  });

  it('denying 127.0.0.1 blocks http://0:<port>/ and 127.0.0.2: the server never fetches', async () => {
    received.length = 0;
    for (const url of [`http://0:${port}/a`, `http://127.0.0.2:${port}/b`]) {
      const r = await fetchThroughProxy('["127.0.0.1"]', url);
      expect(r.isError, url).toBe(true);
      expect(r.text).toContain('endpoint_domain_denied');
      expect(r.traces).toBe(1);
    }
    expect(received).toEqual([]);
  });

  it('a range blocks a name by what it resolves to (localhost, from /etc/hosts)', async () => {
    received.length = 0;
    const r = await fetchThroughProxy('["127.0.0.0/8"]', `http://localhost:${port}/c`);
    expect(r.isError).toBe(true);
    expect(r.text).toContain('endpoint_resolved_address_denied');
    expect(received).toEqual([]);
  });
});
