import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../cli/run.js';
import { connect, node, TINY, traceFiles, writePolicy, type Connected } from './helpers.js';

/*
 * Issue 32: a client that opens a new session per call (Inspector CLI) approves a call, retries
 * the identical call in a new session, and must be let through: an approval binds the call (tool,
 * arguments, targets, policy), not the session — unless the policy says `approval_binding: session`.
 */

const POLICY = (binding: string) => `default_verdict: allow
rules:
  - name: notes-need-approval
    priority: 20
    effect: require_approval
    match:
      tool_names: [write_note]
${binding}`;

const open: Connected[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close().catch(() => undefined);
});

const wardOf = (r: any) => r._meta.ward as Record<string, any>;

async function session(cwd: string, log: string): Promise<Connected> {
  const p = await connect(node(TINY), { cwd, ward: ['--policy', 'policy.yaml'], env: { TINY_SERVER_LOG: log } });
  open.push(p);
  return p;
}

function serverCalls(log: string): string[] {
  return existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l).name) : [];
}

function approve(cwd: string, command: string): void {
  const r = spawnSync('sh', ['-c', command], { cwd, encoding: 'utf8', env: { ...process.env, WARD_STATE_DIR: '' } });
  expect(r.status, r.stderr).toBe(0);
}

describe('approvals across MCP sessions', () => {
  it('the approve command the reply prints grants the identical call from a new session, once; the reply says so', async () => {
    const cwd = tempDir('ward-mcp-session-');
    writePolicy(cwd, POLICY(''));
    const log = join(cwd, 'server.log');
    const note = join(cwd, 'a.txt');
    const args = { name: 'write_note', arguments: { path: note, text: 'hello' } };

    const first = await session(cwd, log);
    const r1: any = await first.client.callTool(args);
    expect(wardOf(r1).verdict).toBe('require_approval');
    const command = String(wardOf(r1).approve_command);
    expect(command).toMatch(/--call-digest [0-9a-f]{64}/);
    expect(r1.content[0].text).toContain('tool write_note with the same arguments and targets');
    expect(r1.content[0].text).toContain('from this session or a new one');
    await first.close();
    approve(cwd, command);

    const second = await session(cwd, log);
    const r2: any = await second.client.callTool(args);
    expect(r2.isError, JSON.stringify(r2)).toBeFalsy();
    expect(r2.content[0].text).toBe(`wrote ${note}`);
    expect(serverCalls(log)).toEqual(['write_note']);
    // Another argument is another call; the same call again needs a new approval (one use).
    const r3: any = await second.client.callTool({ name: 'write_note', arguments: { path: note, text: 'changed' } });
    expect(wardOf(r3).verdict).toBe('require_approval');
    const r4: any = await second.client.callTool(args);
    expect(wardOf(r4).verdict).toBe('require_approval');
    expect(serverCalls(log)).toEqual(['write_note']);
    await second.close();
    const traces = traceFiles(cwd).map((n) => JSON.parse(readFileSync(join(cwd, '.ward', 'traces', n), 'utf8')));
    const granted = traces.filter((t) => (t['reason_codes'] ?? []).includes('approval_granted'));
    expect(granted).toHaveLength(1);
    expect(granted[0]['intent_digest']).not.toBe(wardOf(r1).intent_digest); // another session, another intent digest
  });

  it('approval_binding: session: the reply says this session only, and a new session is asked again', async () => {
    const cwd = tempDir('ward-mcp-session-bound-');
    writePolicy(cwd, POLICY('    approval_binding: session\n'));
    const log = join(cwd, 'server.log');
    const args = { name: 'write_note', arguments: { path: join(cwd, 'b.txt'), text: 'hello' } };
    const first = await session(cwd, log);
    const r1: any = await first.client.callTool(args);
    const command = String(wardOf(r1).approve_command);
    expect(command).not.toContain('--call-digest');
    expect(r1.content[0].text).toContain('from this session only');
    await first.close();
    approve(cwd, command);
    const second = await session(cwd, log);
    const r2: any = await second.client.callTool(args);
    expect(wardOf(r2).verdict).toBe('require_approval');
    expect(serverCalls(log)).toEqual([]);
  });
});
