// What every coding agent's replay test does (tests/daemon/hooks-<host>.test.ts): run a recorded
// event through `ward hook <host>` or `POST /v1/hooks/<host>`, count the traces written, and decide
// the matching Claude Code event for comparison.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REPO, tempDir, ward } from '../cli/run.js';
import { startDaemon, workdir, type DaemonChild } from './helpers.js';

/** The policy every host's fixtures are decided under (fixtures/claude-code/policy.yaml). */
export const HOOK_POLICY = join(REPO, 'fixtures', 'claude-code', 'policy.yaml');

export function traces(state: string): string[] {
  try {
    return readdirSync(join(state, 'traces')).filter((f) => f.startsWith('trace_'));
  } catch {
    return [];
  }
}

/** `ward hook <host>` in a fresh directory; `json` is stdout parsed (undefined when empty). */
export function runHook(host: string, input: string, args?: string[]) {
  const cwd = tempDir(`ward-${host}-hook-`);
  const state = join(cwd, '.ward');
  const r = ward(['hook', host, ...(args ?? ['--policy', HOOK_POLICY, '--state-dir', state])], { cwd, input });
  return { ...r, state, json: r.stdout.trim() === '' ? undefined : (JSON.parse(r.stdout) as unknown) };
}

interface PermissionAnswer {
  permissionDecision: string;
  permissionDecisionReason: string;
}

/** The reason codes a reply's reason names: `(a, b)`. */
const reasonCodes = (reason: string): string | undefined => /\(([^)]*)\)/.exec(reason)?.[1];

/**
 * A host's answer (undefined: no output, an allow) agrees with Claude Code's PreToolUse answer to
 * one of fixtures/claude-code, which must be `decision`: the same verdict — an approval is a deny
 * where the host's hook cannot ask — and the same reason codes.
 */
export function expectClaudeCodeAgrees(answer: PermissionAnswer | undefined, claudeFixture: string, decision: 'allow' | 'deny' | 'ask'): void {
  const r = runHook('claude-code', readFileSync(join(REPO, 'fixtures', 'claude-code', claudeFixture), 'utf8'));
  const cc = (r.json as { hookSpecificOutput: PermissionAnswer }).hookSpecificOutput;
  expect(cc.permissionDecision).toBe(decision);
  expect(answer?.permissionDecision ?? 'allow').toBe(decision === 'ask' ? 'deny' : decision);
  if (decision !== 'allow') expect(reasonCodes(answer!.permissionDecisionReason)).toBe(reasonCodes(cc.permissionDecisionReason));
}

/** `ward serve` with a token, and a client for `POST /v1/hooks/<host>`. */
export async function hookDaemon(host: string): Promise<{ state: string; url: string; token: string; post(body: string, auth?: boolean): Promise<{ status: number; body: unknown }>; stop(): Promise<unknown> }> {
  const token = `${host}-hook-endpoint-test-token-0123456789`;
  const w = workdir();
  const d: DaemonChild = await startDaemon(['--policy', HOOK_POLICY, '--auth-token-env', 'WARD_HOOK_TEST_TOKEN'], { cwd: w.dir, env: { WARD_HOOK_TEST_TOKEN: token } });
  return {
    state: w.state,
    url: d.url,
    token,
    async post(body, auth = true) {
      const r = await request(`${d.url}/v1/hooks/${host}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${token}` } : {}) },
        body,
      });
      return { status: r.statusCode, body: (await r.body.json()) as unknown };
    },
    stop: () => d.stop(),
  };
}

/**
 * Inside a describe: `ward serve` for the block, and each recorded event posted to
 * `/v1/hooks/<host>` answered with the command hook's reply (`{}` for none) after its trace is written.
 */
export function replayThroughEndpoint(host: string, cases: [string, unknown, boolean][], recorded: (name: string) => string, valid: (body: unknown) => boolean = () => true) {
  const daemon: { current?: Awaited<ReturnType<typeof hookDaemon>> } = {};
  beforeAll(async () => {
    daemon.current = await hookDaemon(host);
  });
  afterAll(async () => {
    await daemon.current?.stop();
  });
  it.each(cases)("%s: the command hook's reply ({} for none), after the trace is written", async (name, reply, traced) => {
    const d = daemon.current!;
    const before = traces(d.state).length;
    const http = await d.post(recorded(name));
    expect(http.status).toBe(200);
    expect(http.body).toEqual(reply ?? {});
    expect(valid(http.body)).toBe(true);
    expect(traces(d.state).length).toBe(before + (traced ? 1 : 0));
  });
  return daemon;
}
