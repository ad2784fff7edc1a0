// Tool definitions under suspicion through the real proxy (issue 19, part 4): a server lists a tool
// whose description hides instructions for the model, and a look-alike of another tool's name. Ward
// hides both from tools/list and blocks calls to them (traced, never forwarded) until an operator
// accepts them with `ward mcp pins accept`; a real SDK 1.x client sees only the clean tools.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir, ward as runWard } from '../cli/run.js';
import { textOf, throughWard, traces, wardOf } from './helpers.js';

const SERVER = join(import.meta.dirname, 'poisoned-server.mjs');

function setup() {
  const cwd = tempDir('ward-suspicion-');
  writeFileSync(join(cwd, 'policy.yaml'), 'default_verdict: allow\nrules: []\n');
  const state = join(cwd, '.ward');
  const log = join(cwd, 'server-calls.log');
  return { cwd, state, log, ward: ['--policy', 'policy.yaml', '--state-dir', state], env: { POISONED_SERVER_LOG: log } };
}

const serverCalls = (log: string) => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean) : []);

describe('tool definitions under suspicion', () => {
  it('a poisoned description and a look-alike name are hidden and their calls blocked for the session; clean tools work', async () => {
    const { cwd, state, log, ward, env } = setup();
    const p = await throughWard(ward, [SERVER], { cwd, env });
    try {
      const { tools } = await p.client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['echo', 'read_file']);
      const r = await p.client.callTool({ name: 'add', arguments: { a: 1, b: 2 } });
      expect(r.isError).toBe(true);
      expect(wardOf(r)['reason_codes']).toEqual(['mcp_tool_description_suspicious']);
      expect(textOf(r)).toContain('--pin-tools');
      const shadow = await p.client.callTool({ name: 'Read-File', arguments: { path: '/etc/hosts' } });
      expect(wardOf(shadow)['reason_codes']).toEqual(['mcp_tool_name_shadowed']);
      expect(textOf(await p.client.callTool({ name: 'echo', arguments: { text: 'hi' } }))).toContain('hi');
    } finally {
      await p.close();
    }
    expect(serverCalls(log).map((l) => (JSON.parse(l) as { name: string }).name)).toEqual(['echo']);
    const blocked = traces(state).filter((t) => t['verdict'] === 'block');
    expect(blocked.map((t) => t['violations']).sort()).toEqual([['mcp_tool_description_suspicious'], ['mcp_tool_name_shadowed']]);
    expect(p.stderr()).toContain('tool definition under suspicion');
    expect(p.stderr()).toContain('pseudo_tag at $.description');
  }, 60_000);

  it('--pin-tools: held as pending with its reasons; `ward mcp pins accept` lifts the hold in the running session', async () => {
    const { cwd, log, ward, env } = setup();
    const p = await throughWard([...ward, '--pin-tools'], [SERVER], { cwd, env });
    try {
      expect((await p.client.listTools()).tools.map((t) => t.name)).toEqual(['echo', 'read_file']);
      const blocked = await p.client.callTool({ name: 'add', arguments: { a: 1, b: 2 } });
      expect(wardOf(blocked)['reason_codes']).toEqual(['mcp_tool_description_suspicious']);
      const key = String(wardOf(blocked)['server_key']);
      expect(textOf(blocked)).toContain(`ward mcp pins accept --server ${key} --tool add`);

      const listed = runWard(['mcp', 'pins', 'list', '--server', key], { cwd });
      expect(listed.stdout).toContain('SUSPICIOUS: mcp_tool_description_suspicious');
      expect(listed.stdout).toContain('pinned (nothing yet)');
      const json = JSON.parse(runWard(['mcp', 'pins', 'list', '--server', key, '--json'], { cwd }).stdout) as { servers: { tools: { name: string; pending_reasons?: string[] }[] }[] };
      expect(json.servers[0]!.tools.find((t) => t.name === 'Read-File')!.pending_reasons).toEqual(['mcp_tool_name_shadowed']);

      const accepted = runWard(['mcp', 'pins', 'accept', '--server', key, '--tool', 'add'], { cwd });
      expect(accepted.code, accepted.stderr).toBe(0);
      expect((await p.client.listTools()).tools.map((t) => t.name)).toEqual(['add', 'echo', 'read_file']);
      expect(textOf(await p.client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }))).toBe('3');
    } finally {
      await p.close();
    }
    expect(serverCalls(log).map((l) => (JSON.parse(l) as { name: string }).name)).toEqual(['add']);

    // A later session: the accepted definition is pinned and listed; the look-alike is still held.
    const again = await throughWard([...ward, '--pin-tools'], [SERVER], { cwd, env });
    try {
      expect((await again.client.listTools()).tools.map((t) => t.name)).toEqual(['add', 'echo', 'read_file']);
    } finally {
      await again.close();
    }
  }, 60_000);

  it('--no-witness: every tool is listed and callable (the behaviour before this feature)', async () => {
    const { cwd, ward, env } = setup();
    const p = await throughWard([...ward, '--no-witness'], [SERVER], { cwd, env });
    try {
      expect((await p.client.listTools()).tools.map((t) => t.name)).toEqual(['add', 'echo', 'read_file', 'Read-File']);
      expect(textOf(await p.client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }))).toBe('3');
    } finally {
      await p.close();
    }
  }, 60_000);
});
