// Coding-agent hooks: Claude Code's HTTP hook against a running `ward serve`
// (POST /v1/hooks/claude-code) next to the command hook's whole process (`ward hook claude-code`)
// and a bare `node -e 0`, in the same run; Codex's and Copilot's command hooks and endpoints (which
// they reach through `curl`, having no HTTP hooks) beside them. The HTTP round trip is measured from a keep-alive
// client, as Claude Code keeps one; each call writes its signed trace before the answer.
//
// Issue 32 target: HTTP hook p50 ≤ 3 ms on this machine and ≥ 30× faster than the command hook.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { startServe, stopServe } from './serve.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ward = path.join(repo, 'bin', 'ward.js');
const policy = path.join(repo, 'fixtures', 'claude-code', 'policy.yaml');
const event = readFileSync(path.join(repo, 'fixtures', 'claude-code', 'pre-read.json'), 'utf8');
// The other command-only hosts, with an allowed read each (no output: `{}` from the endpoint).
const others = [
  ['codex', readFileSync(path.join(repo, 'fixtures', 'codex', 'pre-mcp-read.json'), 'utf8')],
  ['copilot', readFileSync(path.join(repo, 'fixtures', 'copilot', 'pre-tool-view.json'), 'utf8')],
];

export default async function hooksBench(h) {
  const title = 'hooks · an allowed read: HTTP hook on ward serve, command hook, node -e 0 (Claude Code; Codex, Copilot)';
  if (!h.matches(title, ['HTTP hook', 'command hook'])) return;
  const cwd = mkdtempSync(path.join(tmpdir(), 'ward-bench-hooks-'));
  mkdirSync(path.join(cwd, '.ward'));
  const daemon = await startServe(['--policy', policy], cwd);
  const dispatcher = new Agent({ connections: 1 });
  try {
    const http = async () => {
      const r = await request(`${daemon.url}/v1/hooks/claude-code`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: event, dispatcher });
      const reply = await r.body.json();
      if (reply?.hookSpecificOutput?.permissionDecision !== 'allow') throw new Error(`unexpected reply ${JSON.stringify(reply)}`);
    };
    const command = () => {
      const r = spawnSync(process.execPath, [ward, 'hook', 'claude-code', '--policy', policy], { cwd, input: event });
      if (r.status !== 0) throw new Error(`ward hook exited ${r.status}: ${r.stderr}`);
    };
    const otherCases = others.flatMap(([host, body]) => [
      [
        `command hook: ward hook ${host}`,
        () => {
          const r = spawnSync(process.execPath, [ward, 'hook', host, '--policy', policy], { cwd, input: body });
          if (r.status !== 0 || r.stdout.length !== 0) throw new Error(`ward hook ${host}: exit ${r.status}, ${r.stdout}${r.stderr}`);
        },
      ],
      [
        `POST /v1/hooks/${host} (behind its curl command)`,
        async () => {
          const r = await request(`${daemon.url}/v1/hooks/${host}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, dispatcher });
          const reply = await r.body.json();
          if (JSON.stringify(reply) !== '{}') throw new Error(`unexpected reply ${JSON.stringify(reply)}`);
        },
      ],
    ]);
    await h.suite(
      title,
      [
        ['node -e 0', () => spawnSync(process.execPath, ['-e', '0'])],
        ['command hook: ward hook claude-code', command],
        ['HTTP hook: POST /v1/hooks/claude-code', http],
        ...otherCases,
      ],
      { baseline: 'node -e 0', rounds: 5, roundMs: 400, minIterations: 2, warmupMs: 300, alloc: false },
    );
  } finally {
    await dispatcher.close();
    await stopServe(daemon);
    rmSync(cwd, { recursive: true, force: true });
  }
}
