// `ward mcp proxy` over stdio spawns the server before it loads the policy, key and journal
// (docs/mcp-proxy.md, start-up order). Whether the spawn really came first is timing, measured in
// the bench (`npm run bench -- mcp`, start-up suite); these tests hold its effects:
// - a policy that fails to load still ends the proxy with the same error and exit code, and the
//   server it had spawned is gone (even one that ignores its stdin);
// - what the client sends at once, before the proxy has loaded, is still decided and traced before
//   anything reaches the server.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { digestJcs } from '../../../src/canon/digest.js';
import { REPO, tempDir, ward } from '../../cli/run.js';
import { RawProxy, writePolicy } from './helpers.js';

const RECORDER = join(REPO, 'tests', 'mcp', 'proxy', 'recording-server.mjs');

type Msg = Record<string, unknown>;

/** Is the process still running? A zombie (exited, not yet reaped by whoever inherited it) is not. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

describe('ward mcp proxy start-up (stdio server spawned first)', () => {
  it('a policy that fails to load: same error and exit code as with no server to spawn, and the spawned server is stopped', () => {
    const cwd = tempDir('ward-mcp-start-');
    writeFileSync(join(cwd, 'policy.yaml'), 'rules: [\n');
    const pidFile = join(cwd, 'server.pid');
    // A shell that records its pid and then ignores its stdin: only a signal stops it.
    const stubborn = ['/bin/sh', '-c', `echo $$ > '${pidFile}'; exec sleep 120`];
    const withServer = ward(['mcp', 'proxy', '--policy', 'policy.yaml', '--', ...stubborn], { cwd, input: '' });
    // The same failure where nothing is spawned early (--upstream-url keeps the old order).
    const without = ward(['mcp', 'proxy', '--policy', 'policy.yaml', '--upstream-url', 'http://127.0.0.1:9/mcp'], { cwd, input: '' });
    expect(withServer.code).toBe(6);
    expect(withServer.code).toBe(without.code);
    expect(withServer.stderr).toBe(without.stderr);
    expect(withServer.stderr).toMatch(/parse policy yaml/);
    expect(withServer.stdout).toBe('');
    // The server was spawned (its pid was written) and is gone once the proxy has exited.
    expect(existsSync(pidFile)).toBe(true);
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    expect(Number.isSafeInteger(pid) && pid > 1).toBe(true);
    expect(alive(pid)).toBe(false);
  }, 30_000);

  it('a SIGTERM once the server is spawned (while Ward may still be loading) leaves no server behind', async () => {
    const cwd = tempDir('ward-mcp-start-');
    writePolicy(cwd);
    const pidFile = join(cwd, 'server.pid');
    const p = new RawProxy(['--policy', 'policy.yaml'], ['/bin/sh', '-c', `echo $$ > '${pidFile}'; exec sleep 120`], cwd);
    try {
      const until = Date.now() + 20_000;
      while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8').trim() === '') {
        if (Date.now() > until) throw new Error(`server never spawned; stderr ${p.stderr}`);
        await new Promise((r) => setTimeout(r, 5));
      }
      p.child.kill('SIGTERM');
      await p.exited;
    } finally {
      p.child.kill('SIGKILL');
    }
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    const gone = Date.now() + 10_000;
    while (alive(pid) && Date.now() < gone) await new Promise((r) => setTimeout(r, 50));
    expect(alive(pid)).toBe(false);
  }, 30_000);

  it('a missing server command with a bad policy reports the policy (as before), a good policy the command (exit 7)', () => {
    const cwd = tempDir('ward-mcp-start-');
    writeFileSync(join(cwd, 'bad.yaml'), 'rules: [\n');
    writePolicy(cwd);
    const bad = ward(['mcp', 'proxy', '--policy', 'bad.yaml', '--', 'ward-no-such-server-cmd'], { cwd, input: '' });
    expect(bad.code).toBe(6);
    expect(bad.stderr).toMatch(/parse policy yaml/);
    const missing = ward(['mcp', 'proxy', '--policy', 'policy.yaml', '--', 'ward-no-such-server-cmd'], { cwd, input: '' });
    expect(missing.code).toBe(7);
    expect(missing.stderr).toMatch(/could not start the MCP server.*ENOENT/);
  }, 30_000);

  it('calls sent at once, before the proxy has loaded, are decided and traced before the server receives them', async () => {
    const cwd = tempDir('ward-mcp-start-');
    const log = join(cwd, 'server.log');
    const blocked = join(cwd, 'blocked.txt');
    writePolicy(cwd); // write_file is blocked, echo allowed
    const WRITE = { path: blocked, content: 'x' };
    const ECHO = { text: 'early' };
    const p = new RawProxy(['--policy', 'policy.yaml'], [process.execPath, RECORDER], cwd, { RECORDING_SERVER_LOG: log });
    try {
      // All in the first write, while the proxy is still loading.
      const call = (id: number, name: string, args: Msg) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
      p.send(
        [
          { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } },
          { jsonrpc: '2.0', method: 'notifications/initialized' },
          call(1, 'write_file', WRITE),
          call(2, 'echo', ECHO),
        ]
          .map((m) => JSON.stringify(m))
          .join('\n'),
      );
      expect((await p.response(0))['result']).toBeDefined();
      const denied = await p.response(1);
      expect(JSON.stringify(denied)).toMatch(/block/);
      expect((await p.response(2))['result']).toMatchObject({ content: [{ type: 'text' }] });
      p.end();
      expect(await p.exited).toBe(0);
    } finally {
      p.child.kill();
    }
    expect(existsSync(blocked)).toBe(false);
    const got = readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Msg);
    const calls = got.filter((m) => m['method'] === 'tools/call');
    expect(calls.map((m) => m['id'])).toEqual([2]);
    const dir = join(cwd, '.ward', 'traces');
    const traces = readdirSync(dir)
      .filter((n) => n.startsWith('trace_') && n.endsWith('.json'))
      .map((n) => JSON.parse(readFileSync(join(dir, n), 'utf8')) as Msg);
    const verdictOf = (id: number, name: string, args: Msg) =>
      traces.filter((t) => String(t['correlation_id']).endsWith(`:${id}`) && t['tool_name'] === name && t['args_digest'] === digestJcs(args as never)).map((t) => t['verdict']);
    expect(verdictOf(1, 'write_file', WRITE)).toEqual(['block']);
    expect(verdictOf(2, 'echo', ECHO)).toEqual(['allow']);
  }, 30_000);
});
