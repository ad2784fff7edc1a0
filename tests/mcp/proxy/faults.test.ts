import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixture, tempDir, ward } from '../../cli/run.js';
import { connect, node, RawProxy, TINY, traceFiles, writePolicy } from './helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(pred: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(50);
  }
}

describe('ward mcp proxy: faults', () => {
  it('the server crashes mid-call: the client gets an error and the proxy exits non-zero', async () => {
    const cwd = tempDir('ward-mcp-crash-');
    writePolicy(cwd);
    const raw = new RawProxy(['--policy', 'policy.yaml'], node(TINY), cwd);
    await raw.initialize();
    raw.call(1, 'crash');
    const r = await raw.response(1);
    const error = r['error'] as { code: number; message: string };
    expect(error.code).toBe(-32061);
    expect(error.message).toMatch(/MCP server exited before answering: MCP server exited with status 7/);
    expect(await raw.exited).toBe(1);
    expect(raw.stderr).toContain('in flight');
  });

  it('the server hangs: --call-timeout answers with an error and the session goes on', async () => {
    const cwd = tempDir('ward-mcp-hang-');
    writePolicy(cwd);
    const raw = new RawProxy(['--policy', 'policy.yaml', '--call-timeout', '300ms'], node(TINY), cwd);
    await raw.initialize();
    const t0 = Date.now();
    raw.call(1, 'hang');
    const r = await raw.response(1);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect((r['error'] as { code: number; message: string }).message).toContain('did not answer tools/call within 300 ms');
    expect((r['error'] as { code: number }).code).toBe(-32062);
    raw.call(2, 'echo', { text: 'still alive' });
    const ok = await raw.response(2);
    expect(JSON.stringify(ok['result']), JSON.stringify(ok)).toContain('echo: still alive');
    raw.end();
    expect(await raw.exited).toBe(0);
  });

  it('malformed JSON-RPC from the client gets an error reply; from the server it is logged; nothing crashes', async () => {
    const cwd = tempDir('ward-mcp-bad-');
    writePolicy(cwd);
    const raw = new RawProxy(['--policy', 'policy.yaml', '--log-file', 'proxy.log'], node(TINY), cwd);
    await raw.initialize();
    raw.send('{this is not json');
    const parse = await raw.waitFor((m) => (m['error'] as { code?: number } | undefined)?.code === -32700);
    expect(parse['id']).toBeNull();
    raw.send({ jsonrpc: '2.0', id: 7, params: {} }); // no method, no result
    const invalid = await raw.response(7);
    expect((invalid['error'] as { code: number }).code).toBe(-32600);
    raw.send({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 42 } });
    expect(((await raw.response(8))['error'] as { code: number }).code).toBe(-32602);

    raw.call(9, 'garbage'); // the server writes two malformed lines, then replies
    const after = await raw.response(9);
    expect(JSON.stringify(after['result'])).toContain('after garbage');
    raw.call(10, 'echo', { text: 'fine' });
    expect(JSON.stringify((await raw.response(10))['result'])).toContain('echo: fine');
    raw.end();
    expect(await raw.exited).toBe(0);
    const log = readFileSync(join(cwd, 'proxy.log'), 'utf8');
    expect(log).toContain('malformed message from the MCP server');
    expect(log).toContain('malformed message from the client');
  });

  it('a 10 MB tool result passes through unchanged with bounded proxy memory', async () => {
    const cwd = tempDir('ward-mcp-big-');
    writePolicy(cwd);
    const p = await connect(node(TINY), { cwd, ward: ['--policy', 'policy.yaml'] });
    try {
      const bytes = 10 * 1024 * 1024;
      const r = await p.client.callTool({ name: 'big', arguments: { bytes } }, { timeout: 60_000 });
      const text = (r.content as { type: string; text: string }[])[0]!.text;
      expect(text.length).toBe(bytes);
      expect(text).toBe('x'.repeat(bytes));
      const pid = p.transport.pid!;
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const peakKb = Number(/VmHWM:\s+(\d+)/.exec(status)![1]);
      // Node itself is ~50 MB; a handful of copies of a 10 MB message is fine, unbounded growth is not.
      expect(peakKb).toBeLessThan(200 * 1024);
    } finally {
      await p.close();
    }
  }, 90_000);

  it('a policy edited to garbage mid-session keeps the old policy (and says why); a valid edit takes effect', async () => {
    const cwd = tempDir('ward-mcp-reload-');
    const policy = writePolicy(cwd);
    const p = await connect(node(TINY), { cwd, ward: ['--policy', 'policy.yaml', '--log-file', 'proxy.log'] });
    const note = { name: 'write_note', arguments: { path: join(cwd, 'n.txt'), text: 'x' } };
    try {
      expect((await p.client.callTool(note)).isError).toBe(true);
      writeFileSync(policy, 'rules: [this is: not: a policy\n');
      await until(() => existsSync(join(cwd, 'proxy.log')) && readFileSync(join(cwd, 'proxy.log'), 'utf8').includes('policy reload failed'));
      expect((await p.client.callTool(note)).isError).toBe(true);
      expect(existsSync(join(cwd, 'n.txt'))).toBe(false);
      expect(readFileSync(join(cwd, 'proxy.log'), 'utf8')).toContain('keeping the previous policy');

      writeFileSync(policy, 'default_verdict: allow\nrules: []\n');
      await until(() => readFileSync(join(cwd, 'proxy.log'), 'utf8').includes('policy reloaded'));
      const r = await p.client.callTool(note);
      expect(r.isError).toBeFalsy();
      expect(readFileSync(join(cwd, 'n.txt'), 'utf8')).toBe('x');
    } finally {
      await p.close();
    }
    expect(p.stderr()).toContain('policy reload failed');
  });

  it('--pin-tools: a tool whose definition changes mid-session is blocked with mcp_tool_definition_changed', async () => {
    const cwd = tempDir('ward-mcp-pin-');
    writePolicy(cwd);
    const p = await connect(node(TINY), { cwd, ward: ['--policy', 'policy.yaml', '--pin-tools'] });
    try {
      await p.client.listTools();
      expect(JSON.stringify((await p.client.callTool({ name: 'echo', arguments: { text: 'a' } })).content)).toContain('echo: a');
      await p.client.callTool({ name: 'mutate', arguments: {} });
      // The changed definition is not listed: its text never reaches the model until accepted.
      const relisted = await p.client.listTools();
      expect(relisted.tools.map((t) => t.name)).not.toContain('echo');
      expect(JSON.stringify(relisted)).not.toContain('evil.example');
      const r = await p.client.callTool({ name: 'echo', arguments: { text: 'b' } });
      expect(r.isError).toBe(true);
      expect((r._meta as { ward: { reason_codes: string[] } }).ward.reason_codes).toEqual(['mcp_tool_definition_changed']);
      // Other tools are unaffected.
      expect((await p.client.callTool({ name: 'big', arguments: { bytes: 3 } })).isError).toBeFalsy();
    } finally {
      await p.close();
    }
    expect(p.stderr()).toContain('tool definition changed since it was pinned');
    expect(ward(['trace', 'verify', '.ward/traces'], { cwd }).code).toBe(0);
    expect(traceFiles(cwd)).toHaveLength(4);
  });

  it('a bad pinned context envelope stops startup; a good one is bound to every call', async () => {
    const cwd = tempDir('ward-mcp-env-');
    writePolicy(cwd);
    writeFileSync(join(cwd, 'bad.json'), '{"schema_id": "gait.context.envelope"');
    const bad = ward(['mcp', 'proxy', '--policy', 'policy.yaml', '--context-envelope', 'bad.json', '--', process.execPath, TINY], { cwd });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/envelope/i);
    expect(bad.stdout).toBe('');

    const p = await connect(node(TINY), { cwd, ward: ['--policy', 'policy.yaml', '--context-envelope', fixture('runs/context_envelope_demo.json')] });
    try {
      await p.client.callTool({ name: 'echo', arguments: { text: 'a' } });
    } finally {
      await p.close();
    }
    const trace = JSON.parse(readFileSync(join(cwd, '.ward', 'traces', traceFiles(cwd)[0]!), 'utf8')) as Record<string, unknown>;
    expect(JSON.stringify(trace)).toMatch(/context_set_digest":"[0-9a-f]{64}/);
  });

  it('usage errors: no server, and a non-loopback --listen without a token', () => {
    const cwd = tempDir('ward-mcp-usage-');
    writePolicy(cwd);
    const none = ward(['mcp', 'proxy', '--policy', 'policy.yaml', '--json'], { cwd });
    expect(none.code).toBe(6);
    const open = ward(['mcp', 'proxy', '--policy', 'policy.yaml', '--listen', '0.0.0.0:0', '--', process.execPath, TINY], { cwd });
    expect(open.code).toBe(6);
    expect(open.stderr).toContain('--auth-token-env');
  });

  it('a server command that does not exist exits 7 (missing dependency) and says to check PATH', () => {
    const cwd = tempDir('ward-mcp-missing-');
    writePolicy(cwd);
    const r = ward(['mcp', 'proxy', '--policy', 'policy.yaml', '--', 'no-such-mcp-server-xyz'], {
      cwd,
      input: '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n',
    });
    expect(r.code).toBe(7);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('on PATH');
  });

  it('--call (and the reference positional form) is the one-shot decision mode', () => {
    const cwd = tempDir('ward-mcp-call-');
    writePolicy(cwd);
    writeFileSync(join(cwd, 'call.json'), JSON.stringify({ name: 'write_note', arguments: { path: '/tmp/x', text: 'y' } }));
    for (const args of [['--policy', 'policy.yaml', '--call', 'call.json'], ['policy.yaml', 'call.json']]) {
      const r = ward(['mcp', 'proxy', ...args, '--json'], { cwd });
      expect(r.code).toBe(3);
      expect(JSON.parse(r.stdout)).toEqual(expect.objectContaining({ ok: true, verdict: 'block', tool_name: 'write_note' }));
    }
  });
});
