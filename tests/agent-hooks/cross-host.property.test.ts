// Property: one policy decides a random tool call identically through every host that can make it —
// `ward hook claude-code`, `ward hook gemini-cli`, `ward hook codex`, `ward hook copilot`, the
// daemon's `POST /v1/hooks/<host>` for each
// host, the MCP proxy (`ward mcp proxy --tool-prefix tool.mcp__tiny__` in front of a real server) and
// `ward gate eval` on the intent the proxy builds (its defaults: risk class high, tool_output arguments). "Identically" is read from the effect: the signed
// trace each path wrote (verdict and reason codes), and each reply says that verdict in its host's
// shape. The command hooks and `gate eval` run through the CLI's own dispatcher in this process (the
// code a `ward` process runs, without a process start per call); the daemon and the proxy are real
// processes. A fixed seed keeps the run reproducible (the paths' agreement is what is tested, not
// the generator's luck).
import fc from 'fast-check';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/canon/index.js';
import type { CliContext } from '../../src/cli/context.js';
import { runCli } from '../../src/cli/program.js';
import { DEFAULT_TARGET_MAPPING, intentForCall } from '../../src/mcp/proxy/intent.js';
import { tempDir } from '../cli/run.js';
import { startDaemon, type DaemonChild } from '../daemon/helpers.js';
import { connect, node, TINY, type Connected } from '../mcp/proxy/helpers.js';

const TOKEN = 'cross-host-property-test-token-0123456789';
const SEED = 20261128;

interface Decided {
  verdict: string;
  reasons: string[];
}

const policyFor = (ws: string) => `schema_id: gait.gate.policy
schema_version: 1.0.0
default_verdict: block
rules:
  - name: block-secrets
    priority: 5
    effect: block
    match:
      target_values: [${ws}/.env]
  - name: block-exec
    priority: 10
    effect: block
    match:
      endpoint_classes: [proc.exec]
  - name: block-deletes
    priority: 15
    effect: block
    match:
      endpoint_classes: [fs.delete]
  - name: approve-writes
    priority: 20
    effect: require_approval
    match:
      endpoint_classes: [fs.write]
  - name: allow-reads
    priority: 30
    effect: allow
    match:
      endpoint_classes: [fs.read]
  - name: allow-docs
    priority: 30
    effect: allow
    match:
      endpoint_classes: [net.http]
    endpoint:
      domain_allowlist: [docs.example.com]
  - name: allow-echo
    priority: 40
    effect: allow
    match:
      tool_names: [tool.mcp__tiny__echo]
`;

let ws: string;
let policy: string;
let daemon: DaemonChild;
let daemonState: string;
let proxy: Connected;

/** The traces a state directory holds, by name. */
function traceNames(state: string): Set<string> {
  try {
    return new Set(readdirSync(join(state, 'traces')).filter((f) => f.startsWith('trace_')));
  } catch {
    return new Set();
  }
}

/** The one trace `act` wrote into `state` (waiting, bounded, for a host that writes it behind its answer). */
async function traced<T>(state: string, act: () => Promise<T>): Promise<{ out: T; trace: Decided }> {
  const before = traceNames(state);
  const out = await act();
  for (let waited = 0; ; waited += 10) {
    const added = [...traceNames(state)].filter((n) => !before.has(n));
    if (added.length > 1) throw new Error(`${added.length} traces for one call in ${state}`);
    if (added.length === 1) {
      const t = JSON.parse(readFileSync(join(state, 'traces', added[0]!), 'utf8')) as { verdict: string; reason_codes?: string[] };
      return { out, trace: { verdict: t.verdict, reasons: [...(t.reason_codes ?? [])].sort() } };
    }
    if (waited > 5000) throw new Error(`no trace in ${state} 5 s after the answer ${JSON.stringify(out)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** `ward <args>` through the CLI's dispatcher, stdin given. */
async function cli(args: string[], stdin: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const ctx: CliContext = {
    argv: args,
    cwd: ws,
    env: { ...process.env, WARD_STATE_DIR: '' },
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    readStdin: async () => stdin,
    isTTY: false,
    exitCode: 0,
  };
  const code = await runCli(args, ctx);
  return { code, stdout, stderr };
}

async function post(host: string, body: string): Promise<unknown> {
  const r = await request(`${daemon.url}/v1/hooks/${host}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body,
  });
  expect(r.statusCode).toBe(200);
  return r.body.json();
}

/** Claude Code's PreToolUse reply as a verdict: allow, ask → require_approval, deny → block. */
function claudeVerdict(reply: unknown): string {
  const d = (reply as { hookSpecificOutput: { permissionDecision: string } }).hookSpecificOutput.permissionDecision;
  return d === 'allow' ? 'allow' : d === 'ask' ? 'require_approval' : 'block';
}

/** Gemini CLI's BeforeTool reply: `{}` lets the call run, `decision: deny` stops it (approval included: it cannot ask). */
function geminiRuns(reply: unknown): boolean {
  return (reply as { decision?: string }).decision !== 'deny';
}

/** Codex's and Copilot's PreToolUse replies: no output (or `{}`) lets the call run, a deny stops it (approval included). */
function runsUnlessDenied(reply: unknown): boolean {
  const r = (reply ?? {}) as { permissionDecision?: string; hookSpecificOutput?: { permissionDecision?: string } };
  return (r.hookSpecificOutput?.permissionDecision ?? r.permissionDecision) !== 'deny';
}

const event = (fields: JsonObject): JsonObject => ({ session_id: 'prop', transcript_path: '/tmp/t.jsonl', cwd: ws, ...fields });

/** A tool call as another host sends it (`tool_name`, `tool_input`): Codex's PreToolUse, Copilot's camelCase preToolUse. */
interface OtherHost {
  host: 'codex' | 'copilot';
  call: { tool_name: string; tool_input: JsonObject };
}

function otherEvent({ host, call }: OtherHost): string {
  if (host === 'codex') return JSON.stringify(event({ hook_event_name: 'PreToolUse', turn_id: 'turn_prop', model: 'gpt-5-codex', permission_mode: 'default', tool_use_id: 'call_prop', ...call }));
  return JSON.stringify({ sessionId: 'prop', timestamp: 1764318600000, cwd: ws, toolName: call.tool_name, toolArgs: JSON.stringify(call.tool_input) });
}

/** The same call through another host's command hook and its endpoint; both traces, each reply saying its trace's verdict. */
async function throughOtherHost(other: OtherHost): Promise<Decided[]> {
  const body = otherEvent(other);
  const state = join(ws, other.host);
  const command = await traced(state, () => cli(['hook', other.host, '--policy', policy, '--state-dir', state], body));
  const http = await traced(daemonState, () => post(other.host, body));
  expect(command.out.code, command.out.stderr).toBe(0);
  const reply = command.out.stdout.trim() === '' ? undefined : (JSON.parse(command.out.stdout) as unknown);
  expect(runsUnlessDenied(reply)).toBe(command.trace.verdict === 'allow');
  expect(runsUnlessDenied(http.out)).toBe(http.trace.verdict === 'allow');
  return [command.trace, http.trace];
}

/** One call decided through both command hooks and both hook endpoints (and `others`' hooks); their traces and replies. */
async function throughHooks(claude: JsonObject, gemini: JsonObject, others: OtherHost[] = []): Promise<Decided[]> {
  const ccEvent = JSON.stringify(event({ hook_event_name: 'PreToolUse', tool_use_id: 'toolu_prop', ...claude }));
  const gemEvent = JSON.stringify(event({ hook_event_name: 'BeforeTool', timestamp: '2026-11-28T08:30:00.000Z', ...gemini }));
  const ccState = join(ws, 'cc');
  const gemState = join(ws, 'gem');
  const cc = await traced(ccState, () => cli(['hook', 'claude-code', '--policy', policy, '--state-dir', ccState], ccEvent));
  const gem = await traced(gemState, () => cli(['hook', 'gemini-cli', '--policy', policy, '--state-dir', gemState], gemEvent));
  const ccHttp = await traced(daemonState, () => post('claude-code', ccEvent));
  const gemHttp = await traced(daemonState, () => post('gemini-cli', gemEvent));
  for (const r of [cc.out, gem.out]) expect(r.code, r.stderr).toBe(0);
  const ccReply = JSON.parse(cc.out.stdout) as unknown;
  const gemReply = JSON.parse(gem.out.stdout) as unknown;
  // Each reply says its own trace's verdict, in its host's shape; the endpoint answers as the command.
  expect(claudeVerdict(ccReply)).toBe(cc.trace.verdict);
  expect(geminiRuns(gemReply)).toBe(gem.trace.verdict === 'allow');
  expect(claudeVerdict(ccHttp.out)).toBe(ccHttp.trace.verdict);
  expect(geminiRuns(gemHttp.out)).toBe(gemHttp.trace.verdict === 'allow');
  const more: Decided[] = [];
  for (const other of others) more.push(...(await throughOtherHost(other)));
  return [cc.trace, gem.trace, ccHttp.trace, gemHttp.trace, ...more];
}

beforeAll(async () => {
  ws = tempDir('ward-cross-host-');
  policy = join(ws, 'policy.yaml');
  writeFileSync(policy, policyFor(ws));
  daemonState = join(ws, 'daemon');
  daemon = await startDaemon(['--policy', policy, '--state-dir', daemonState, '--auth-token-env', 'WARD_CROSS_HOST_TOKEN'], {
    cwd: ws,
    env: { WARD_CROSS_HOST_TOKEN: TOKEN },
  });
  proxy = await connect(node(TINY), { cwd: ws, ward: ['--policy', policy, '--state-dir', join(ws, '.ward'), '--tool-prefix', 'tool.mcp__tiny__'] });
}, 30_000);

afterAll(async () => {
  await proxy?.close();
  await daemon?.stop();
});

const PATHS = () => fc.constantFrom(`${ws}/.env`, `${ws}/notes/a.txt`, 'notes/b.md', '/etc/passwd', `${ws}/src/main.ts`);
const URLS = fc.constantFrom('https://docs.example.com/guide', 'https://evil.example/x', 'http://169.254.169.254/latest');
const COMMANDS = fc.constantFrom('rm -rf /', 'ls -la', 'git status');
const TEXT = fc.constantFrom('hello', 'note', '');

describe('one policy, every host (property over random tool calls)', () => {
  it('an MCP tool call: the command hooks, the hook endpoints (Claude Code, Gemini CLI, Codex), the MCP proxy and gate eval write the same verdict and reason codes', async () => {
    // Tools of the fixture server (echo, write_note, delete_note) and tools it does not have: the
    // policy decides before the server is asked. The server's writes and deletes never run: the
    // policy asks approval for writes and blocks deletes.
    const call = fc.record({
      tool: fc.constantFrom('echo', 'write_note', 'delete_note', 'read_note', 'run_command', 'fetch_page'),
      args: fc.record(
        { path: PATHS(), text: TEXT, url: URLS, command: COMMANDS },
        { requiredKeys: [] },
      ),
    });
    let runs = 0;
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(call, async ({ tool, args }) => {
        runs++;
        const mcpName = `mcp__tiny__${tool}`;
        // Codex names MCP tools as Claude Code does (`mcp__server__tool`, the arguments as tool_input).
        // Gemini CLI names it mcp_<server>_<tool> (its current hooks reference) and says which server
        // and tool in mcp_context.
        const gemini = { tool_name: `mcp_tiny_${tool}`, tool_input: args, mcp_context: { server_name: 'tiny', tool_name: tool, command: 'node', args: ['tiny-server.mjs'] } };
        const hooks = await throughHooks({ tool_name: mcpName, tool_input: args }, gemini, [{ host: 'codex', call: { tool_name: mcpName, tool_input: args } }]);

        const proxyState = join(ws, '.ward');
        // A tool the server does not have is refused by the server (a protocol error), after Ward allowed it.
        const viaProxy = await traced(proxyState, () =>
          proxy.client.callTool({ name: tool, arguments: args }).then(
            (r) => ({ ran: !r.isError && JSON.stringify(r.content).includes(tool === 'echo' ? 'echo:' : 'wrote'), reachedServer: !r.isError }),
            (err: Error) => ({ ran: false, reachedServer: /not found/.test(err.message) }),
          ),
        );
        // What the client saw agrees with the trace: a call the policy did not allow never reached the server.
        if (viaProxy.trace.verdict !== 'allow') expect(viaProxy.out).toEqual({ ran: false, reachedServer: false });

        const intent = intentForCall(
          { name: tool, arguments: args, sessionId: 'prop', runId: 'prop', clientName: 'prop', createdAt: '2026-11-28T08:30:00Z' },
          { toolPrefix: 'tool.mcp__tiny__', targets: DEFAULT_TARGET_MAPPING, argSource: 'tool_output', workspace: ws, riskClass: 'high' },
          false,
        );
        const intentFile = join(ws, 'intent.json');
        writeFileSync(intentFile, JSON.stringify(intent));
        const gateState = join(ws, 'gate');
        const gate = await traced(gateState, () => cli(['gate', 'eval', '--policy', policy, '--intent', intentFile, '--json', '--state-dir', gateState], ''));
        expect((JSON.parse(gate.out.stdout) as { verdict: string }).verdict).toBe(gate.trace.verdict);

        // The proxy and gate eval run the approval step, which adds approval_token_missing when no
        // token was presented (docs/architecture.md: the hosts' step lists); the hooks do not ask for
        // tokens. The policy's own reasons are compared.
        const policyOwn = (d: Decided): Decided => ({ ...d, reasons: d.reasons.filter((r) => r !== 'approval_token_missing') });
        const all = [...hooks, policyOwn(viaProxy.trace), policyOwn(gate.trace)];
        expect(all, `${tool} ${JSON.stringify(args)}`).toEqual(Array(all.length).fill(hooks[0]));
        seen.add(hooks[0]!.verdict);
      }),
      { seed: SEED, numRuns: 25, endOnFailure: true },
    );
    expect(runs).toBeGreaterThanOrEqual(25);
    // The generated calls reached every verdict the policy gives, not only its default.
    expect([...seen].sort()).toEqual(['allow', 'block', 'require_approval']);
  }, 120_000);

  it("a built-in tool: Claude Code's, Gemini CLI's, Codex's and Copilot's names for it decide alike through the command hooks and the endpoints", async () => {
    // Claude Code's tool and Gemini CLI's equivalent, with the arguments each documents.
    // Codex edits files with apply_patch (every file its headers name) and has no read tool; Copilot
    // has view, create, edit and bash.
    const codex = (tool_name: string, tool_input: JsonObject): OtherHost => ({ host: 'codex', call: { tool_name, tool_input } });
    const copilot = (tool_name: string, tool_input: JsonObject): OtherHost => ({ host: 'copilot', call: { tool_name, tool_input } });
    const patch = (header: string, p: string, body: string) => ({ command: `*** Begin Patch\n*** ${header}: ${p}\n${body}\n*** End Patch\n` });
    const call = fc.oneof(
      PATHS().map((p) => [{ tool_name: 'Read', tool_input: { file_path: p } }, { tool_name: 'read_file', tool_input: { file_path: p } }, [copilot('view', { path: p })]] as const),
      fc.tuple(PATHS(), TEXT).map(
        ([p, t]) =>
          [
            { tool_name: 'Write', tool_input: { file_path: p, content: t } },
            { tool_name: 'write_file', tool_input: { file_path: p, content: t } },
            [codex('apply_patch', patch('Add File', p, `+${t}`)), copilot('create', { path: p, file_text: t })],
          ] as const,
      ),
      fc.tuple(PATHS(), TEXT).map(
        ([p, t]) =>
          [
            { tool_name: 'Edit', tool_input: { file_path: p, old_string: 'a', new_string: t } },
            { tool_name: 'replace', tool_input: { file_path: p, old_string: 'a', new_string: t } },
            [codex('apply_patch', patch('Update File', p, `@@\n-a\n+${t}`)), copilot('edit', { path: p, old_str: 'a', new_str: t })],
          ] as const,
      ),
      COMMANDS.map(
        (c) =>
          [
            { tool_name: 'Bash', tool_input: { command: c } },
            { tool_name: 'run_shell_command', tool_input: { command: c } },
            [codex('Bash', { command: c }), copilot('bash', { command: c })],
          ] as const,
      ),
    );
    let runs = 0;
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(call, async ([claude, gemini, others]) => {
        runs++;
        const all = await throughHooks(claude, gemini, [...others]);
        expect(all, JSON.stringify(claude)).toEqual(Array(all.length).fill(all[0]));
        seen.add(all[0]!.verdict);
      }),
      { seed: SEED, numRuns: 25, endOnFailure: true },
    );
    expect(runs).toBeGreaterThanOrEqual(25);
    // The generated calls reached every verdict the policy gives, not only its default.
    expect([...seen].sort()).toEqual(['allow', 'block', 'require_approval']);
  }, 120_000);
});
