// Golden outputs of the MCP decision service hosts: the one-shot `ward mcp proxy --call`, the Claude
// Code hook `ward hook claude-code`, and the `ward mcp serve` HTTP service (see golden.ts for masks
// and regeneration).
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectGolden, golden, killSwitchIn, killSwitchJournal, Masker, parseJsonText, REPO, runWardAsync, traceFile, tracePathsIn, WARD, WARD_ENV, workDir, guardInputs } from './golden.js';

guardInputs();

const POLICY = golden('inputs/policy.yaml');
const call = (name: string) => golden(`inputs/calls/${name}.json`);

function masker(dir: string): Masker {
  // The one-shot command makes up a random correlation id; trace files are named by their emission
  // time; these hosts take no evaluation time, so the kill-switch check is stamped with the wall clock.
  return new Masker({ correlation_id: '<CORRELATION_ID>', evaluated_at: '<EVALUATED_AT>' })
    .substitute(dir, '<WORK>')
    .substitute(REPO.replace(/\/$/, ''), '<REPO>')
    .pattern(/trace__\d{8}T\d{6}\.\d+\.json/g, 'trace__<OBSERVED_AT_COMPACT>.json');
}

/** Trace files under `<dir>/.ward/traces`, verified, sorted by name. */
function traceFilesIn(dir: string): Record<string, unknown>[] {
  const tdir = join(dir, '.ward', 'traces');
  if (!existsSync(tdir)) return [];
  return readdirSync(tdir)
    .filter((n) => n.endsWith('.json'))
    .sort()
    .map((n) => traceFile(join(tdir, n)));
}

// Every case has its own work dir, so the cases run concurrently.
describe.concurrent('golden: ward mcp proxy --call (one-shot decision)', () => {
  async function pin(name: string, flags: string[], opts: { input?: string } = {}): Promise<Record<string, unknown>> {
    const { dir, key } = workDir('call');
    // '@kill-switch' stands for a copy of the kill-switch fixture in the work dir (its journal is written beside it).
    const argv = ['mcp', 'proxy', '--policy', POLICY, '--key-mode', 'prod', '--private-key', key, '--json', ...flags.map((f) => (f === '@kill-switch' ? killSwitchIn(dir) : f))];
    const run = await runWardAsync(argv, { cwd: dir, ...(opts.input !== undefined ? { input: opts.input } : {}) });
    const { format, value } = parseJsonText(run.stdout, `${name} stdout`);
    const out = value as Record<string, unknown>;
    const named = tracePathsIn(out);
    const traces = named.map(traceFile);
    // Any other trace written (there should be none) shows up here.
    const others = traceFilesIn(dir).filter((t) => !named.includes(String(t['path'])));
    const journal = killSwitchJournal(dir);
    expectGolden(`service/call-${name}`, { argv, exit_code: run.code, stdout_format: format, stdout: out, stderr: run.stderr, traces, other_traces: others, ...(journal ? { kill_switch_journal: journal } : {}) }, masker(dir));
    return out;
  }

  it('allow, block by rule, require_approval', async () => {
    expect((await pin('allow', ['--call', call('read')]))['verdict']).toBe('allow');
    expect((await pin('block-rule', ['--call', call('delete')]))['verdict']).toBe('block');
    expect((await pin('approval-required', ['--call', call('write')]))['verdict']).toBe('require_approval');
  });

  it('script, fail-closed missing field, openai adapter', async () => {
    expect((await pin('script', ['--call', call('script')]))['verdict']).toBe('require_approval');
    expect((await pin('fail-closed-missing-field', ['--call', call('high-risk-missing')]))['verdict']).toBe('block');
    expect((await pin('adapter-openai', ['--call', call('openai'), '--adapter', 'openai']))['verdict']).toBeDefined();
  });

  it('kill switch active', async () => {
    expect((await pin('kill-switch', ['--call', call('read'), '--kill-switch-state', '@kill-switch']))['verdict']).toBe('block');
  });

  it('emergency stop: a stopped job blocks (and the blocked dispatch is recorded); an unreadable job state blocks', async () => {
    // The job root is copied into the work dir: the service appends to <job>/events.jsonl.
    const { dir, key } = workDir('call-jobs');
    cpSync(golden('inputs/jobs'), join(dir, 'jobs'), { recursive: true });
    const flags = (c: string) => ['mcp', 'proxy', '--policy', POLICY, '--key-mode', 'prod', '--private-key', key, '--json', '--job-root', 'jobs', '--call', call(c)];
    const records: Record<string, unknown>[] = [];
    for (const c of ['read-job-stopped', 'read-job-missing']) {
      const run = await runWardAsync(flags(c), { cwd: dir });
      const { format, value } = parseJsonText(run.stdout, c);
      records.push({ argv: flags(c), exit_code: run.code, stdout_format: format, stdout: value, stderr: run.stderr, traces: tracePathsIn(value).map(traceFile) });
    }
    // One event per blocked dispatch; its created_at is the wall clock.
    const events = readFileSync(join(dir, 'jobs', 'job-stopped', 'events.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => ({ ...(JSON.parse(l) as Record<string, unknown>), created_at: '<WRITTEN_AT>' }));
    expectGolden('service/call-emergency-stop', { runs: records, job_stopped_events: events }, masker(dir));
    expect((records[0]!['stdout'] as Record<string, unknown>)['verdict']).toBe('block');
  });

  it('explicit --trace-out and --run-id', async () => {
    expect((await pin('trace-out', ['--call', call('read'), '--trace-out', 'out/trace.json', '--run-id', 'run_golden_1']))['verdict']).toBe('allow');
  });

  it('payload from stdin; undecodable payload and bad adapter exit 6', async () => {
    expect((await pin('stdin', ['--call', '-'], { input: JSON.stringify({ name: 'tool.read', args: { path: '/golden/ws/x' }, context: { identity: 'a', workspace: '/golden/ws', risk_class: 'medium', session_id: 's' }, created_at: '2026-03-12T11:00:00Z' }) }))['ok']).toBe(true);
    expect((await pin('undecodable', ['--call', '-'], { input: JSON.stringify({ args: {} }) }))['ok']).toBe(false);
    expect((await pin('bad-adapter', ['--call', call('read'), '--adapter', 'gemini']))['ok']).toBe(false);
  });
});

describe.concurrent('golden: ward hook claude-code', () => {
  const CC_POLICY = golden('inputs/claude-code/policy.yaml');
  const event = (name: string) => golden(`inputs/claude-code/${name}.json`);

  async function pin(name: string, input: string, extra: string[] = []): Promise<CliRunOut> {
    const { dir, key } = workDir('hook');
    const argv = ['hook', 'claude-code', '--policy', CC_POLICY, '--state-dir', join(dir, '.ward'), '--key-mode', 'prod', '--private-key', key, ...extra.map((f) => (f === '@kill-switch' ? killSwitchIn(dir) : f))];
    const run = await runWardAsync(argv, { cwd: dir, input });
    const stdout = run.stdout === '' ? { stdout_format: 'empty', stdout: '' } : (({ format, value }) => ({ stdout_format: format, stdout: value }))(parseJsonText(run.stdout, `${name} stdout`));
    // Claude Code reads stderr for exit 2; pinned as text.
    const journal = killSwitchJournal(dir);
    expectGolden(`service/hook-${name}`, { argv, stdin: input.length > 200 ? '<the event fixture>' : input, exit_code: run.code, ...stdout, stderr: run.stderr, traces: traceFilesIn(dir), ...(journal ? { kill_switch_journal: journal } : {}) }, masker(dir));
    return { code: run.code, stdout: run.stdout };
  }

  // The event fixtures' bytes, exactly as Claude Code would write them to the hook's stdin.
  const read = (name: string) => readFileSync(event(name), 'utf8');

  it('PreToolUse: allow, ask, deny (exec), deny (secret), web fetch', async () => {
    expect((await pin('pre-read', read('pre-read'))).code).toBe(0);
    expect((await pin('pre-write', read('pre-write'))).code).toBe(0);
    expect((await pin('pre-bash-rm', read('pre-bash-rm'))).code).toBe(0);
    expect((await pin('pre-read-secret', read('pre-read-secret'))).code).toBe(0);
    expect((await pin('pre-webfetch', read('pre-webfetch'))).code).toBe(0);
  });

  it('PermissionRequest and PostToolUse', async () => {
    await pin('perm-write', read('perm-write'));
    await pin('post-read', read('post-read'));
  });

  it('kill switch active', async () => {
    await pin('kill-switch', read('pre-read'), ['--kill-switch-state', '@kill-switch']);
  });

  it('unparsable input and an unknown event fail closed', async () => {
    await pin('garbage', '{"hook_event_name": ');
    await pin('unknown-event', JSON.stringify({ session_id: 's', hook_event_name: 'Nonsense', tool_name: 'Read', tool_input: {} }));
  });
});

describe('golden: ward mcp serve (HTTP decision service)', () => {
  let dir: string;
  let key: string;
  let url: string;
  let proc: ChildProcess;

  beforeAll(async () => {
    ({ dir, key } = workDir('mcp-serve'));
    proc = spawn(process.execPath, [WARD, 'mcp', 'serve', '--policy', POLICY, '--listen', '127.0.0.1:0', '--key-mode', 'prod', '--private-key', key], {
      cwd: dir,
      env: { ...process.env, ...WARD_ENV },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    url = await new Promise<string>((resolve, reject) => {
      const onData = (d: Buffer) => {
        out += d.toString();
        const m = /http:\/\/127\.0\.0\.1:\d+/.exec(out + err);
        if (m) resolve(m[0]);
      };
      proc.stdout!.on('data', onData);
      proc.stderr!.on('data', onData);
      proc.on('exit', (code) => reject(new Error(`mcp serve exited ${code}: ${out} ${err}`)));
    });
  });

  afterAll(async () => {
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    await exited;
  });

  async function pinServe(name: string, path: string, body: unknown): Promise<void> {
    const res = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    const headers: Record<string, string> = {};
    res.headers.forEach((v, k) => {
      if (!['date', 'connection', 'keep-alive', 'content-length'].includes(k)) headers[k] = v;
    });
    const { format, value } = parseJsonText(path.endsWith('/sse') ? text.replace(/^event: evaluate\ndata: /, '').replace(/\n\n$/, '') : text, `${name} body`);
    const traces = tracePathsIn(value).map(traceFile);
    // x-request-id: a per-process random prefix and a counter.
    const m = new Masker({ correlation_id: '<CORRELATION_ID>', evaluated_at: '<EVALUATED_AT>', 'x-request-id': '<REQUEST_ID>' })
      .substitute(dir, '<WORK>')
      .substitute(REPO.replace(/\/$/, ''), '<REPO>')
      .pattern(/trace__\d{8}T\d{6}\.\d+\.json/g, 'trace__<OBSERVED_AT_COMPACT>.json');
    expectGolden(`service/serve-${name}`, { request: { path, body }, status: res.status, headers, body_format: path.endsWith('/sse') ? `sse(${format})` : format, body: value, traces }, m);
  }

  it('allow, block, require_approval, sse, invalid', async () => {
    const c = (name: string) => JSON.parse(readFileSync(call(name), 'utf8')) as unknown;
    await pinServe('allow', '/v1/evaluate', { call: c('read') });
    await pinServe('block', '/v1/evaluate', { call: c('delete') });
    await pinServe('approval', '/v1/evaluate', { call: c('write') });
    await pinServe('sse', '/v1/evaluate/sse', { call: c('read') });
    await pinServe('invalid', '/v1/evaluate', { call: { args: {} } });
  });
});

interface CliRunOut {
  code: number;
  stdout: string;
}
