import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bareDir, tempDir, ward } from '../../cli/run.js';
import { connect, EVERYTHING, FILESYSTEM, node, RawProxy, TINY, traceFiles, writePolicy } from './helpers.js';

describe('ward mcp proxy over stdio: reference servers', () => {
  it('server-everything: tools/list and allowed results are exactly the direct ones; blocked calls get the deny reply; progress flows; every call has a verifying trace', async () => {
    const cwd = tempDir('ward-mcp-ev-');
    writePolicy(cwd);
    const direct = await connect(node(EVERYTHING, 'stdio'), { cwd });
    const proxied = await connect(node(EVERYTHING, 'stdio'), { cwd, ward: ['--policy', 'policy.yaml'] });
    try {
      const [a, b] = await Promise.all([direct.client.listTools(), proxied.client.listTools()]);
      expect(b.tools).toEqual(a.tools);
      expect(b.tools.map((t) => t.name)).toContain('get-env');

      const args = { name: 'get-sum', arguments: { a: 2, b: 40 } };
      expect(await proxied.client.callTool(args)).toEqual(await direct.client.callTool(args));
      const echo = { name: 'echo', arguments: { message: 'through ward' } };
      expect(await proxied.client.callTool(echo)).toEqual(await direct.client.callTool(echo));

      const blocked = await proxied.client.callTool({ name: 'get-env', arguments: {} });
      expect(blocked.isError).toBe(true);
      expect(JSON.stringify(blocked.content)).toContain('Blocked by policy: matched_rule_block_writes');
      const w = (blocked._meta as { ward: Record<string, unknown> }).ward;
      expect(w['verdict']).toBe('block');
      expect(w['reason_codes']).toEqual(['matched_rule_block_writes']);
      expect(String(w['trace_id'])).toMatch(/^[0-9a-f]{24}$/);
      expect(blocked.structuredContent).toBeUndefined(); // the tool's outputSchema governs structuredContent, not Ward
      expect(JSON.stringify(blocked.content)).not.toContain('PATH');

      const progress: number[] = [];
      const long = await proxied.client.callTool(
        { name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 3 } },
        { onprogress: (p) => progress.push(p.progress) },
      );
      expect(JSON.stringify(long.content)).toContain('Long running operation completed');
      // The SDK client runs notification handlers a microtask after its response handler, so a last
      // progress notification that arrives in the same read as the result can be dropped by the
      // client itself (directly or through Ward); the earlier ones must all arrive, in order.
      expect(progress.slice(0, 2)).toEqual([1, 2]);
      expect(progress.length === 2 || progress[2] === 3).toBe(true);
    } finally {
      await direct.close();
      await proxied.close();
    }
    // 4 evaluated calls, 4 traces; all verify.
    expect(traceFiles(cwd)).toHaveLength(4);
    const v = ward(['trace', 'verify', '.ward/traces'], { cwd });
    expect(v.code).toBe(0);
    expect(v.stdout).toContain('4/4 verified');
  });

  it('server-filesystem: a blocked write_file never reaches the server (no file); allowed reads return the direct result', async () => {
    const cwd = tempDir('ward-mcp-fs-');
    const root = join(cwd, 'files');
    writePolicy(cwd);
    writeFileSync(join(cwd, 'seed.txt'), '');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(root);
    writeFileSync(join(root, 'a.txt'), 'hello from a\n');
    const direct = await connect(node(FILESYSTEM, root), { cwd });
    const proxied = await connect(node(FILESYSTEM, root), { cwd, ward: ['--policy', 'policy.yaml', '--tool-prefix', ''] });
    try {
      const read = { name: 'read_text_file', arguments: { path: join(root, 'a.txt') } };
      expect(await proxied.client.callTool(read)).toEqual(await direct.client.callTool(read));
      const list = { name: 'list_directory', arguments: { path: root } };
      expect(await proxied.client.callTool(list)).toEqual(await direct.client.callTool(list));

      const target = join(root, 'evil.txt');
      const r = await proxied.client.callTool({ name: 'write_file', arguments: { path: target, content: 'pwned' } });
      expect(r.isError).toBe(true);
      expect((r._meta as { ward: { verdict: string } }).ward.verdict).toBe('block');
      // The proxy answered; give a (wrongly) forwarded call time to land, then prove it did not.
      await proxied.client.callTool(list);
      expect(existsSync(target)).toBe(false);
    } finally {
      await direct.close();
      await proxied.close();
    }
    expect(ward(['trace', 'verify', '.ward/traces'], { cwd }).code).toBe(0);
  });
});

describe('ward mcp proxy over stdio: verdict replies', () => {
  it('maps targets from arguments and traces the intent it decided on', async () => {
    const cwd = tempDir('ward-mcp-map-');
    writePolicy(
      cwd,
      `default_verdict: allow
rules:
  - name: no-etc
    effect: block
    match:
      target_kinds: [path]
      target_values: [/etc/passwd]
`,
    );
    const p = await connect(node(TINY), { cwd, ward: ['--policy', 'policy.yaml', '--tool-prefix', 'notes.', '--capture-intents'] });
    try {
      const r = await p.client.callTool({ name: 'write_note', arguments: { path: '/etc/passwd', text: 'x' } });
      expect((r._meta as { ward: { reason_codes: string[] } }).ward.reason_codes).toEqual(['matched_rule_no_etc']);
    } finally {
      await p.close();
    }
    const traces = traceFiles(cwd);
    expect(traces).toHaveLength(1);
    const trace = JSON.parse(readFileSync(join(cwd, '.ward', 'traces', traces[0]!), 'utf8')) as Record<string, unknown>;
    expect(trace['tool_name']).toBe('notes.write_note');
    const captures = readdirSync(join(cwd, '.ward', 'traces')).filter((n) => n.startsWith('capture_'));
    expect(captures).toHaveLength(1);
    const capture = JSON.parse(readFileSync(join(cwd, '.ward', 'traces', captures[0]!), 'utf8')) as { intent: Record<string, unknown> };
    expect(capture.intent['targets']).toEqual([
      expect.objectContaining({ kind: 'path', value: '/etc/passwd', operation: 'write', endpoint_class: 'fs.write', discovery_method: 'mcp' }),
    ]);
    expect(capture.intent['context']).toEqual(
      // No --workspace: the server's base for relative paths is unknown, and so is the intent's (issue 26).
      expect.objectContaining({ identity: 'mcp-client:ward-test', risk_class: 'high', workspace: '.' }),
    );
    expect(capture.intent['arg_provenance']).toEqual([
      { arg_path: '$.path', source: 'tool_output' },
      { arg_path: '$.text', source: 'tool_output' },
    ]);
  });

  it("--deny-as error answers with JSON-RPC error -32060 (a code of Ward's own) carrying the ward object", async () => {
    const cwd = tempDir('ward-mcp-deny-');
    writePolicy(cwd);
    const raw = new RawProxy(['--policy', 'policy.yaml', '--deny-as', 'error'], node(TINY), cwd);
    await raw.initialize();
    raw.call(1, 'write_note', { path: join(cwd, 'n.txt'), text: 'x' });
    const r = await raw.response(1);
    const error = r['error'] as { code: number; message: string; data: Record<string, unknown> };
    expect(error.code).toBe(-32060);
    expect(error.message).toContain('Blocked by policy');
    expect(error.data['verdict']).toBe('block');
    expect(error.data['policy_digest']).toMatch(/^[0-9a-f]{64}$/);
    expect(existsSync(join(cwd, 'n.txt'))).toBe(false);
    raw.end();
    expect(await raw.exited).toBe(0);
  });

  it('require_approval: the reply gives the exact ward approve command; a token in --approval-dir allows the next identical call', async () => {
    const cwd = tempDir('ward-mcp-approve-');
    writePolicy(cwd);
    const note = join(cwd, 'doomed.txt');
    writeFileSync(note, 'still here');
    const p = await connect(node(TINY), { cwd, ward: ['--policy', 'policy.yaml'] });
    try {
      const call = { name: 'delete_note', arguments: { path: note } };
      const first = await p.client.callTool(call);
      const w = (first._meta as { ward: Record<string, string> }).ward;
      expect(w['verdict']).toBe('require_approval');
      expect(existsSync(note)).toBe(true);
      const command = w['approve_command']!;
      expect(command).toMatch(/^(ward|\S+ \S+\/bin\/ward\.js) approve --intent-digest [0-9a-f]{64} --policy-digest [0-9a-f]{64} --call-digest [0-9a-f]{64} --scope /);
      expect(command).toContain(w['intent_digest']);
      // A person pastes the command, verbatim, in a shell somewhere else (src/decision/approval-command.ts).
      const minted = spawnSync('sh', ['-c', command], { cwd: bareDir(), encoding: 'utf8', env: { ...process.env, WARD_STATE_DIR: '' } });
      expect(minted.status, minted.stderr).toBe(0);
      const second = await p.client.callTool(call);
      expect(second.isError).toBeFalsy();
      expect(JSON.stringify(second.content)).toContain('deleted');
      expect(existsSync(note)).toBe(false);
    } finally {
      await p.close();
    }
    const verdicts = traceFiles(cwd).map((n) => JSON.parse(readFileSync(join(cwd, '.ward', 'traces', n), 'utf8')) as Record<string, unknown>);
    const granted = verdicts.find((t) => t['verdict'] === 'allow');
    expect(granted?.['reason_codes']).toContain('approval_granted');
  });

  it('dry_run is not forwarded and says so', async () => {
    const cwd = tempDir('ward-mcp-dry-');
    writePolicy(cwd, 'default_verdict: dry_run\nrules: []\n');
    const p = await connect(node(TINY), { cwd, ward: ['--policy', 'policy.yaml'], env: { TINY_SERVER_LOG: join(cwd, 'seen.log') } });
    try {
      const r = await p.client.callTool({ name: 'echo', arguments: { text: 'x' } });
      expect(JSON.stringify(r.content)).toContain('Dry run by policy');
      expect((r._meta as { ward: { verdict: string } }).ward.verdict).toBe('dry_run');
    } finally {
      await p.close();
    }
    expect(existsSync(join(cwd, 'seen.log'))).toBe(false);
  });

  it('--hide-blocked-tools drops always-blocked tools from tools/list; calling one anyway is still decided and traced', async () => {
    const cwd = tempDir('ward-mcp-hide-');
    writePolicy(cwd);
    const p = await connect(node(TINY), { cwd, ward: ['--policy', 'policy.yaml', '--hide-blocked-tools'] });
    try {
      const names = (await p.client.listTools()).tools.map((t) => t.name);
      expect(names).not.toContain('write_note');
      expect(names).toContain('delete_note'); // require_approval is not "always blocked"
      expect(names).toContain('echo');
      const r = await p.client.callTool({ name: 'write_note', arguments: { path: join(cwd, 'x'), text: 'x' } });
      expect(r.isError).toBe(true);
    } finally {
      await p.close();
    }
    expect(traceFiles(cwd)).toHaveLength(1);
  });

  it('each session is captured as a signed run, spooled for the store', async () => {
    const cwd = tempDir('ward-mcp-run-');
    writePolicy(cwd);
    const p = await connect(node(TINY), { cwd, ward: ['--policy', 'policy.yaml'] });
    await p.client.callTool({ name: 'echo', arguments: { text: 'a' } });
    await p.client.callTool({ name: 'write_note', arguments: { path: join(cwd, 'x'), text: 'x' } });
    await p.close();
    const spool = join(cwd, '.ward', 'spool');
    // The proxy spools when its client goes away; allow it a moment to finish.
    for (let i = 0; i < 50 && !(existsSync(spool) && readdirSync(spool).length); i++) await new Promise((r) => setTimeout(r, 100));
    const packs = readdirSync(spool).filter((n) => n.startsWith('runpack_'));
    expect(packs).toHaveLength(1);
    const v = ward(['verify', join(spool, packs[0]!), '--json'], { cwd });
    expect(v.code).toBe(0);
    const ingest = ward(['store', 'ingest', '--json'], { cwd });
    expect(ingest.code).toBe(0);
    const list = ward(['store', 'list', '--json'], { cwd });
    expect(list.stdout).toMatch(/"mcp_mcp[0-9a-f]+/);
  });
});
