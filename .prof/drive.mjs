// profiling driver: N sequential calls through `ward mcp proxy` (PROXY=1) or relay/direct
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { performance } from 'node:perf_hooks';
import { writeFileSync, mkdtempSync } from 'node:fs';
import path from 'node:path';
import { tmpdir } from 'node:os';
const repo = process.env.REPO ?? process.cwd();
const mode = process.argv[2] ?? 'ward';
const N = Number(process.argv[3] ?? 3000);
const cwd = mkdtempSync(path.join(tmpdir(), 'prof-'));
writeFileSync(path.join(cwd, 'policy.yaml'), `default_verdict: allow
rules:
  - name: block-writes
    priority: 10
    effect: block
    match:
      tool_names: [write_note]
  - name: high-risk-paths
    priority: 20
    effect: require_approval
    match:
      target_kinds: [path]
      target_values: [/etc/shadow]
`);
const TINY = path.join(repo, 'fixtures/mcp/tiny-server.mjs');
const extra = (process.env.NODEARGS ?? '').split(' ').filter(Boolean);
const args = mode === 'direct' ? [TINY] : mode === 'relay' ? [path.join(repo,'bench/relay.mjs'), '--', process.execPath, TINY]
  : [...extra, path.join(repo, 'bin/ward.js'), 'mcp', 'proxy', '--policy', 'policy.yaml', '--trace-sync', 'write', ...(process.env.WARDARGS ?? '').split(' ').filter(Boolean), '--', process.execPath, TINY];
const t = new StdioClientTransport({ command: process.execPath, args, cwd, stderr: 'inherit', env: { ...process.env, WARD_STATE_DIR: path.join(cwd, '.ward-state') } });
const c = new Client({ name: 'prof', version: '1' });
await c.connect(t);
const lat = [];
for (let i = 0; i < N; i++) {
  const t0 = performance.now();
  const r = await c.callTool({ name: 'echo', arguments: { text: `x-${i}-${Math.random()}` } });
  lat.push(performance.now() - t0);
  if (r.isError) throw new Error(JSON.stringify(r));
}
lat.sort((a, b) => a - b);
console.log(mode, 'p50', lat[lat.length >> 1].toFixed(3), 'p90', lat[Math.floor(lat.length * 0.9)].toFixed(3));
await c.close();
console.log('cwd', cwd);
