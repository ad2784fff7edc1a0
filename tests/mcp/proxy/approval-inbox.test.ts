import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir, ward } from '../../cli/run.js';
import { closeAll, consoleDaemon, pendingFor, signTemplate } from '../../daemon/console-helpers.js';
import { call } from '../../daemon/helpers.js';
import { connect, EVERYTHING, node, TINY, traceFiles, writePolicy, type Connected } from './helpers.js';

/*
 * `ward mcp proxy --approval inbox`: a call that needs approval is reported to a real `ward serve`
 * (in-process), held while a person answers in the inbox (here: the test signs the daemon's
 * template with an approver's key, as the browser does), then decided again by the proxy.
 */

const POLICY = `default_verdict: allow
rules:
  - name: notes-need-approval
    priority: 20
    effect: require_approval
    match:
      tool_names: [write_note]
`;

const open: Connected[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close().catch(() => undefined);
  await closeAll();
});

function traces(cwd: string): Record<string, any>[] {
  return traceFiles(cwd)
    .map((n) => JSON.parse(readFileSync(join(cwd, '.ward', 'traces', n), 'utf8')) as Record<string, any>)
    .sort((a, b) => String(a['created_at'] ?? a['evaluated_at']).localeCompare(String(b['created_at'] ?? b['evaluated_at'])));
}

function serverCalls(log: string): { name: string }[] {
  return existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
}

async function waitForPending(url: string, tool: string): Promise<any> {
  for (let i = 0; i < 100; i++) {
    const e = await pendingFor(url, tool);
    if (e) return e;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no pending ${tool} in the inbox`);
}

async function proxyTo(inboxUrl: string, jwks: string, extra: string[] = [], env: Record<string, string> = {}) {
  const cwd = tempDir('ward-mcp-inbox-');
  writePolicy(cwd, POLICY);
  const log = join(cwd, 'server.log');
  const p = await connect(node(TINY), {
    cwd,
    ward: ['--policy', 'policy.yaml', '--approval', 'inbox', '--approval-inbox', inboxUrl, '--approval-jwks', jwks, ...extra],
    env: { TINY_SERVER_LOG: log, ...env },
  });
  open.push(p);
  return { cwd, log, p };
}

const wardOf = (r: any) => r._meta.ward as Record<string, any>;

describe('ward mcp proxy --approval inbox', () => {
  it('approve: the held call runs once a person approves in the inbox; deny: blocked with approval_denied', async () => {
    const c = await consoleDaemon({}, POLICY);
    const { cwd, log, p } = await proxyTo(c.d.url, c.approversFile);
    const note = join(cwd, 'a.txt');

    const waiting = p.client.callTool({ name: 'write_note', arguments: { path: note, text: 'secret-value-123' } });
    const e = await waitForPending(c.d.url, 'write_note');
    expect(e.source).toBe('reported');
    expect(e.args.redacted).toBe(true);
    expect(JSON.stringify(e)).not.toContain('secret-value-123');
    expect(e.targets.some((t: any) => t.value === note && t.canonical === note)).toBe(true);
    expect(e.identity).toMatch(/^mcp-client:/); // from the intent's context, as the proxy decided it
    expect(e.reason_codes).toContain('approval_token_missing');
    expect(e.matched_rule).toBe('notes-need-approval');
    expect(serverCalls(log)).toEqual([]); // held, not forwarded

    const ok = await call(c.d.url, `/v1/approvals/${e.id}/approve`, { body: await signTemplate(c.d.url, e.id, c.alice) });
    expect(ok.status).toBe(200);
    const r: any = await waiting;
    expect(r.isError).toBeFalsy();
    expect(r.content[0].text).toBe(`wrote ${note}`);
    expect(serverCalls(log).map((x) => x.name)).toEqual(['write_note']);
    expect(readdirSync(join(cwd, '.ward', 'approvals')).some((n) => n.startsWith('approval_inbox_'))).toBe(true);

    // Deny: the next call (other arguments) waits, a person denies it with a signed reason.
    const denied = p.client.callTool({ name: 'write_note', arguments: { path: join(cwd, 'b.txt'), text: 'no' } });
    let e2: any;
    for (let i = 0; i < 100 && !e2; i++) {
      e2 = (await call(c.d.url, '/v1/approvals')).json.entries.find((x: any) => x.tool_name === 'write_note' && x.id !== e.id);
      if (!e2) await new Promise((res) => setTimeout(res, 100));
    }
    expect(e2).toBeTruthy();
    const no = await call(c.d.url, `/v1/approvals/${e2.id}/deny`, { body: await signTemplate(c.d.url, e2.id, c.bob, { kind: 'denial', reason: 'not this file' }) });
    expect(no.status).toBe(200);
    const d: any = await denied;
    expect(d.isError).toBe(true);
    expect(wardOf(d).verdict).toBe('block');
    expect(wardOf(d).reason_codes).toContain('approval_denied');
    expect(wardOf(d).approval_inbox).toBe('denied');
    expect(d.content[0].text).toContain('not this file');
    expect(serverCalls(log).map((x) => x.name)).toEqual(['write_note']);
    await p.close(); // traces are journaled first; closing writes them out as files
    const ts = traces(cwd);
    expect(ts.map((t) => t['verdict'])).toEqual(['require_approval', 'allow', 'require_approval', 'block']);
    expect(ts[0]!['trace_id']).toBe(e.trace_id);
    expect(ts[1]!['reason_codes']).toContain('approval_granted');
    expect(ts[3]!['reason_codes']).toContain('approval_denied');
  });

  it('resources/read that needs approval is held in the inbox, shown as the method with its URI, and read once approved', async () => {
    const methodPolicy = 'default_verdict: allow\nrules:\n  - name: reads-need-approval\n    priority: 20\n    effect: require_approval\n    match:\n      tool_names: [mcp.resource.read]\n';
    const c = await consoleDaemon({}, methodPolicy);
    const cwd = tempDir('ward-mcp-inbox-method-');
    writePolicy(cwd, methodPolicy);
    const p = await connect(node(EVERYTHING, 'stdio'), { cwd, ward: ['--policy', 'policy.yaml', '--approval', 'inbox', '--approval-inbox', c.d.url, '--approval-jwks', c.approversFile] });
    open.push(p);
    const uri = (await p.client.listResources()).resources[0]!.uri;
    const waiting = p.client.readResource({ uri });
    const e = await waitForPending(c.d.url, 'mcp.resource.read');
    expect(e.source).toBe('reported');
    expect(e.targets.some((t: any) => t.value === uri)).toBe(true);
    // What the approver signs names the method's intent, its target and the argument digest Ward derived.
    expect(e.call.tool_name).toBe('mcp.resource.read');
    expect(e.call.args_digest).toMatch(/^[0-9a-f]{64}$/);
    const ok = await call(c.d.url, `/v1/approvals/${e.id}/approve`, { body: await signTemplate(c.d.url, e.id, c.alice) });
    expect(ok.status).toBe(200);
    const read: any = await waiting;
    expect(read.contents[0].uri).toBe(uri);
    await p.close();
    const ts = traces(cwd).filter((t) => t['tool_name'] === 'mcp.resource.read');
    expect(ts.map((t) => t['verdict'])).toEqual(['require_approval', 'allow']);
    expect(ts[1]!['reason_codes']).toContain('approval_granted');
    expect(ts[1]!['args_digest']).toBe(e.call.args_digest);
  }, 60_000);

  it('a daemon under another policy refuses the report: the call is refused, never forwarded, nothing enters the inbox', async () => {
    const c = await consoleDaemon(); // CONSOLE_POLICY: the proxy's write_note rule is not there
    const { cwd, log, p } = await proxyTo(c.d.url, c.approversFile);
    const r: any = await p.client.callTool({ name: 'write_note', arguments: { path: join(cwd, 'e.txt'), text: 'x' } });
    expect(r.isError).toBe(true);
    expect(wardOf(r).verdict).toBe('require_approval');
    expect(wardOf(r).approval_inbox).toBe('unreachable');
    expect(r.content[0].text).toContain('refused to enter this call');
    expect(r.content[0].text).toContain('approval_report_policy_mismatch');
    expect(serverCalls(log)).toEqual([]);
    expect((await call(c.d.url, '/v1/approvals?status=all')).json.count).toBe(0);
  });

  it('daemon down: the call is refused (require_approval, traced), never forwarded', async () => {
    const c = await consoleDaemon();
    const port = await new Promise<number>((res) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const a = s.address() as { port: number };
        s.close(() => res(a.port));
      });
    });
    const { cwd, log, p } = await proxyTo(`http://127.0.0.1:${port}`, c.approversFile);
    const r: any = await p.client.callTool({ name: 'write_note', arguments: { path: join(cwd, 'c.txt'), text: 'x' } });
    expect(r.isError).toBe(true);
    expect(wardOf(r).verdict).toBe('require_approval');
    expect(wardOf(r).approval_inbox).toBe('unreachable');
    expect(r.content[0].text).toContain('could not be reached');
    expect(serverCalls(log)).toEqual([]);
    await p.close();
    expect(traces(cwd).map((t) => t['verdict'])).toEqual(['require_approval']);
  });

  it('a daemon with a bearer token: the token comes from the environment and never shows; no answer in time refuses the call', async () => {
    const secret = 'inbox-bearer-token-0123456789abcdef';
    const c = await consoleDaemon({ authToken: secret }, POLICY);
    const { cwd, log, p } = await proxyTo(c.d.url, c.approversFile, ['--approval-inbox-token-env', 'INBOX_TOKEN', '--call-timeout', '5s', '--verbose'], { INBOX_TOKEN: secret });
    const r: any = await p.client.callTool({ name: 'write_note', arguments: { path: join(cwd, 'd.txt'), text: 'x' } });
    expect(wardOf(r).approval_inbox).toBe('timeout');
    expect(wardOf(r).verdict).toBe('require_approval');
    const e = await pendingFor(c.d.url, 'write_note', { authorization: `Bearer ${secret}` });
    expect(wardOf(r).approval_id).toBe(e.id);
    expect(serverCalls(log)).toEqual([]);
    expect(p.stderr()).not.toContain(secret);
    expect(JSON.stringify(r)).not.toContain(secret);
  });

  it('usage: --approval inbox needs the URL and the approvers\' keys; a remote daemon needs a token', () => {
    const cwd = tempDir('ward-mcp-inbox-usage-');
    writePolicy(cwd, POLICY);
    const run = (...args: string[]) => ward(['mcp', 'proxy', '--policy', 'policy.yaml', ...args, '--', ...node(TINY)], { cwd, env: { WARD_STATE_DIR: '' } });
    expect(run('--approval', 'inbox', '--approval-jwks', 'x.jwks').stderr).toContain('--approval-inbox <url>');
    expect(run('--approval', 'inbox', '--approval-inbox', 'http://127.0.0.1:1').stderr).toContain('--approval-jwks');
    expect(run('--approval', 'inbox', '--approval-inbox', 'http://ward.example:8787', '--approval-jwks', 'x.jwks').stderr).toContain('--approval-inbox-token-env');
    expect(run('--approval-inbox', 'http://127.0.0.1:1').stderr).toContain('needs --approval inbox');
  });
});
