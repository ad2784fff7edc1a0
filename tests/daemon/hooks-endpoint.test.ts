// POST /v1/hooks/claude-code: Claude Code's HTTP hook against the daemon decides every event the
// way `ward hook claude-code` does (same policy, same reply), after the trace is written.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, ward } from '../cli/run.js';
import { startDaemon, workdir, type DaemonChild } from './helpers.js';

const FIXTURES = join(REPO, 'fixtures', 'claude-code');
const POLICY = join(FIXTURES, 'policy.yaml');
const TOKEN = 'hook-endpoint-test-token-0123456789';
const EVENTS = ['pre-read.json', 'pre-read-secret.json', 'pre-bash-rm.json', 'pre-write.json', 'pre-mcp-read.json', 'perm-bash-rm.json', 'post-bash-rm.json'];

let d: DaemonChild;
let w: ReturnType<typeof workdir>;

beforeAll(async () => {
  w = workdir();
  d = await startDaemon(['--policy', POLICY, '--auth-token-env', 'WARD_HOOK_TEST_TOKEN'], { cwd: w.dir, env: { WARD_HOOK_TEST_TOKEN: TOKEN } });
});
afterAll(async () => {
  await d?.stop();
});

async function post(body: string, token: string | null = TOKEN) {
  const r = await request(`${d.url}/v1/hooks/claude-code`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body,
  });
  return { status: r.statusCode, body: (await r.body.json()) as Record<string, unknown> };
}

/** The reply's decision, whatever the event's shape. */
function decisionOf(reply: Record<string, unknown>): unknown {
  const out = reply['hookSpecificOutput'] as Record<string, unknown> | undefined;
  if (out?.['permissionDecision']) return out['permissionDecision'];
  if ((out?.['decision'] as Record<string, unknown> | undefined)?.['behavior']) return (out!['decision'] as Record<string, unknown>)['behavior'];
  return reply['decision'] ?? 'none';
}

describe('POST /v1/hooks/claude-code', () => {
  it.each(EVENTS)('%s: the same decision as the command hook, in the event\'s reply shape', async (name) => {
    const event = readFileSync(join(FIXTURES, name), 'utf8');
    const http = await post(event);
    expect(http.status).toBe(200);
    const cli = ward(['hook', 'claude-code', '--policy', POLICY, '--state-dir', join(w.dir, 'cli-state')], { cwd: w.dir, input: event });
    expect(cli.code, cli.stderr).toBe(0);
    const command = JSON.parse(cli.stdout) as Record<string, unknown>;
    expect(decisionOf(http.body), name).toBe(decisionOf(command));
    expect(Object.keys(http.body).sort()).toEqual(Object.keys(command).sort());
  });

  it('a refused call has a signed trace in the daemon\'s state before the answer', async () => {
    const before = readdirSync(join(w.state, 'traces')).filter((f) => f.startsWith('trace_')).length;
    const http = await post(readFileSync(join(FIXTURES, 'pre-bash-rm.json'), 'utf8'));
    expect(decisionOf(http.body)).toBe('deny');
    expect(readdirSync(join(w.state, 'traces')).filter((f) => f.startsWith('trace_')).length).toBe(before + 1);
  });

  it('fails closed: malformed input is a blocking answer with 200; a missing token is refused like every route', async () => {
    const bad = await post('{"hook_event_name": "PreToolUse", "tool_name": ');
    expect(bad.status).toBe(200);
    expect(bad.body['decision'] === 'block' || decisionOf(bad.body) === 'deny').toBe(true);
    const anonymous = await post(readFileSync(join(FIXTURES, 'pre-read.json'), 'utf8'), null);
    expect(anonymous.status).toBe(401);
  });
});
