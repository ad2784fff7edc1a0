// One target model for every host (issue 26, findings 5 and 6): the same MCP tool call, under one
// policy, decided through `ward hook claude-code`, through `ward mcp proxy` in front of the real
// server-filesystem and server-everything, and through `ward gate eval` with an intent that declares
// no targets. The verdicts must be identical, and through the proxy the effect is checked: a denied
// file's content never reaches the client, and a denied URL is never fetched.
import { createServer, type Server } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, ward } from '../cli/run.js';
import { EVERYTHING, FILESYSTEM, textOf, throughWard, wardOf } from '../witness-proxy/helpers.js';

const SECRET = 'ward-one-target-model-secret';
const PUBLIC = 'ward-one-target-model-public';

interface Case {
  server: 'fs' | 'everything';
  tool: string;
  args: () => Record<string, unknown>;
  verdict: 'allow' | 'block';
  /** Through the proxy: what the client must (allow) or must not (block) see, or the fetch count. */
  effect: 'public' | 'secret' | 'fetch';
}

let ws: string;
let hits: string[];
let http: Server;
let port: number;

beforeAll(async () => {
  ws = tempDir('ward-one-model-');
  mkdirSync(join(ws, 'secrets'));
  writeFileSync(join(ws, 'secrets', 'key.pem'), SECRET);
  writeFileSync(join(ws, 'pub.txt'), PUBLIC);
  hits = [];
  // A stand-in for a metadata service: it records every request it gets.
  http = createServer((req, res) => {
    hits.push(`${req.headers.host ?? ''}${req.url ?? ''}`);
    res.end('instance-credentials');
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  port = (http.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((r) => http.close(r));
});

const policy = () => `default_verdict: allow
rules:
  - name: no-metadata
    priority: 5
    effect: block
    match:
      target_values: ["http://127.0.0.1:${port}/latest/meta-data/"]
  - name: no-secrets
    priority: 10
    effect: allow
    endpoint:
      path_denylist: ["${ws}/secrets/**"]
`;

const CASES: Case[] = [
  // `paths` was mapped by the proxy and not by the hook (finding 6).
  { server: 'fs', tool: 'read_multiple_files', args: () => ({ paths: [join(ws, 'secrets', 'key.pem')] }), verdict: 'block', effect: 'secret' },
  { server: 'fs', tool: 'read_multiple_files', args: () => ({ paths: [join(ws, 'pub.txt')] }), verdict: 'allow', effect: 'public' },
  { server: 'fs', tool: 'read_text_file', args: () => ({ path: join(ws, 'secrets', 'key.pem') }), verdict: 'block', effect: 'secret' },
  { server: 'fs', tool: 'read_text_file', args: () => ({ path: join(ws, 'pub.txt') }), verdict: 'allow', effect: 'public' },
  // server-everything names its URL argument `data` (finding 5): no map needed any more.
  { server: 'everything', tool: 'gzip-file-as-resource', args: () => ({ name: 'a.gz', data: `http://127.0.0.1:${port}/latest/meta-data/` }), verdict: 'block', effect: 'fetch' },
  { server: 'everything', tool: 'gzip-file-as-resource', args: () => ({ name: 'b.gz', data: `http://127.0.0.1:${port}/public` }), verdict: 'allow', effect: 'fetch' },
];

/** Claude Code's name for an MCP tool, and the proxy prefix that names it alike. */
const hookName = (c: Case) => `mcp__${c.server}__${c.tool}`;
const prefix = (c: Case) => `tool.mcp__${c.server}__`;

function viaHook(c: Case, policyFile: string, state: string): string {
  const input = JSON.stringify({
    session_id: 'one-model',
    cwd: ws,
    hook_event_name: 'PreToolUse',
    tool_name: hookName(c),
    tool_input: c.args(),
    tool_use_id: 'toolu_one_model',
  });
  const r = ward(['hook', 'claude-code', '--policy', policyFile, '--state-dir', state], { cwd: ws, input });
  expect(r.code, r.stderr).toBe(0);
  const d = (JSON.parse(r.stdout) as { hookSpecificOutput: { permissionDecision: string } }).hookSpecificOutput.permissionDecision;
  return d === 'allow' ? 'allow' : d === 'deny' ? 'block' : d;
}

function viaGateEval(c: Case, policyFile: string, state: string): string {
  const intentFile = join(state, `intent-${c.server}-${c.tool}.json`);
  writeFileSync(
    intentFile,
    JSON.stringify({
      // The name the hook and the prefixed proxy give the tool; no declared targets.
      tool_name: `tool.mcp__${c.server}__${c.tool.replace(/-/g, '_')}`,
      args: c.args(),
      targets: [],
      context: { identity: 'alice', workspace: ws, risk_class: 'medium' },
    }),
  );
  const r = ward(['gate', 'eval', '--policy', policyFile, '--intent', intentFile, '--state-dir', state, '--json'], { cwd: ws });
  expect(r.stderr).toBe('');
  return (JSON.parse(r.stdout) as { verdict: string }).verdict;
}

describe('one target model: hook, proxy and gate eval decide the same call the same way', () => {
  it('identical verdicts, and through the proxy nothing denied reaches the client or the network', async () => {
    const dir = tempDir('ward-one-model-state-');
    const policyFile = join(dir, 'policy.yaml');
    writeFileSync(policyFile, policy());
    const state = join(dir, '.ward');
    mkdirSync(state, { recursive: true });

    const hook = CASES.map((c) => viaHook(c, policyFile, state));
    const cli = CASES.map((c) => viaGateEval(c, policyFile, state));

    const proxy: string[] = [];
    for (const server of ['fs', 'everything'] as const) {
      const cases = CASES.filter((c) => c.server === server);
      const cmd = server === 'fs' ? [FILESYSTEM, ws] : [EVERYTHING, 'stdio'];
      const env = { GZIP_ALLOWED_DOMAINS: '127.0.0.1' };
      const p = await throughWard(['--policy', policyFile, '--state-dir', state, '--tool-prefix', prefix(cases[0]!)], cmd, { cwd: ws, env });
      try {
        for (const c of cases) {
          const before = hits.length;
          const res = await p.client.callTool({ name: c.tool, arguments: c.args() });
          const text = textOf(res) + JSON.stringify(res);
          const w = wardOf(res);
          const verdict = typeof w['verdict'] === 'string' ? (w['verdict'] as string) : 'allow';
          proxy.push(verdict);
          if (c.effect === 'secret') expect(text).not.toContain(SECRET);
          if (c.effect === 'public') expect(text).toContain(PUBLIC);
          // The server never got the blocked call: nothing was fetched. The allowed one was.
          if (c.effect === 'fetch') expect(hits.length - before).toBe(c.verdict === 'block' ? 0 : 1);
        }
      } finally {
        await p.close();
      }
    }

    const expected = CASES.map((c) => c.verdict);
    expect(hook).toEqual(expected);
    expect(proxy).toEqual(expected);
    expect(cli).toEqual(expected);
    expect(hits.some((h) => h.includes('meta-data'))).toBe(false);
  }, 120_000);
});
