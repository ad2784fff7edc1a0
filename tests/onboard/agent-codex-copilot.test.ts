// `ward init --agent codex` and `ward init --agent copilot`: a starter policy, .ward/, and Ward's
// hook in the host's own hooks file (.codex/hooks.json, .github/hooks/ward.json) — merged,
// idempotent, in the shape the host documents, checked by doctor — and the registered command works
// when the host runs it: it decides, and when Ward cannot start it still blocks in the host's way.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, tempDir, ward } from '../cli/run.js';

type Json = Record<string, unknown>;

interface Host {
  agent: 'codex' | 'copilot';
  file: string;
  check: string;
  /** The registered command, from the written file. */
  command(file: Json): string;
  /** The host's fields and types, from its documentation; what does not conform. */
  schemaProblems(file: Json): string[];
  /** A recorded shell-command event (fixtures/<host>/…). */
  shellEvent(dir: string): string;
  /** The reply to that event under baseline-lowrisk (commands need approval, which these hosts get as a deny). */
  denied(stdout: string): boolean;
  /** A user's own hooks file content, to be kept. */
  mine: Json;
}

const typed = (obj: Json, types: Record<string, string>, where: string): string[] =>
  Object.entries(obj).flatMap(([k, v]) => (typeof v === types[k] ? [] : [`${where} field ${k}: ${typeof v}`]));

const fixture = (host: string, name: string) => JSON.parse(readFileSync(join(REPO, 'fixtures', host, name), 'utf8')) as Json;

const HOSTS: Host[] = [
  {
    agent: 'codex',
    file: join('.codex', 'hooks.json'),
    check: 'codex_hook',
    command: (f) => ((f['hooks'] as Json)['PreToolUse'] as { hooks: Json[] }[]).flatMap((g) => g.hooks).find((h) => String(h['command']).includes(' hook codex '))!['command'] as string,
    // openai/codex codex-rs/config/src/hook_config.rs: HooksFile { hooks: { <Event>: [MatcherGroup { matcher, hooks: [Command { command, timeout, async, statusMessage }] }] } }.
    schemaProblems(f) {
      const events = ['PreToolUse', 'PermissionRequest', 'PostToolUse', 'PreCompact', 'PostCompact', 'SessionStart', 'UserPromptSubmit', 'Stop'];
      const problems: string[] = [];
      for (const [event, groups] of Object.entries(f['hooks'] as Json)) {
        if (!events.includes(event)) problems.push(`unknown event ${event}`);
        for (const group of groups as Json[]) {
          problems.push(...typed(group, { matcher: 'string', hooks: 'object' }, event));
          for (const hook of group['hooks'] as Json[]) {
            problems.push(...typed(hook, { type: 'string', command: 'string', timeout: 'number', async: 'boolean', statusMessage: 'string' }, event));
            if (hook['type'] === 'command' && !Number.isInteger(hook['timeout'] ?? 0)) problems.push(`${event} timeout is not whole seconds`);
          }
        }
      }
      return problems;
    },
    shellEvent: (dir) => JSON.stringify({ ...fixture('codex', 'pre-bash-rm.json'), cwd: dir, tool_input: { command: 'ls' } }),
    denied: (stdout) => (JSON.parse(stdout) as { hookSpecificOutput: { permissionDecision: string } }).hookSpecificOutput.permissionDecision === 'deny',
    mine: { hooks: { PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo done' }] }], PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'mine.sh' }] }] } },
  },
  {
    agent: 'copilot',
    file: join('.github', 'hooks', 'ward.json'),
    check: 'copilot_hook',
    command: (f) => ((f['hooks'] as Json)['preToolUse'] as Json[]).find((h) => String(h['bash']).includes(' hook copilot '))!['bash'] as string,
    // GitHub's CLI hooks reference, "Command hooks": version 1; type, bash, powershell, cwd, env, timeoutSec.
    schemaProblems(f) {
      const problems = f['version'] === 1 ? [] : ['version is not 1'];
      for (const [event, entries] of Object.entries(f['hooks'] as Json)) {
        for (const hook of entries as Json[]) {
          problems.push(...typed(hook, { type: 'string', bash: 'string', powershell: 'string', cwd: 'string', env: 'object', timeoutSec: 'number', comment: 'string' }, event));
          if (hook['type'] === 'command' && typeof hook['bash'] !== 'string' && typeof hook['powershell'] !== 'string') problems.push(`${event} command without bash or powershell`);
        }
      }
      return problems;
    },
    shellEvent: (dir) => JSON.stringify({ ...fixture('copilot', 'pre-tool-bash-rm.json'), cwd: dir, toolArgs: JSON.stringify({ command: 'ls' }) }),
    denied: (stdout) => (JSON.parse(stdout) as { permissionDecision: string }).permissionDecision === 'deny',
    mine: { version: 1, hooks: { sessionStart: [{ type: 'command', bash: 'echo hi' }], preToolUse: [{ type: 'command', bash: 'mine.sh' }] } },
  },
];

const readFile = (dir: string, host: Host) => JSON.parse(readFileSync(join(dir, host.file), 'utf8')) as Json;

/** The registered command run as the host runs it: through a shell, from the project (Copilot: cwd "."), the event on stdin. */
function runRegistered(dir: string, host: Host, command = host.command(readFile(dir, host))) {
  return spawnSync('sh', ['-c', command], { cwd: dir, input: host.shellEvent(dir), encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '', WARD_STATE_DIR: '' } });
}

interface Doctor {
  checks: { name: string; status: string; message: string; fix_command?: string }[];
}
const doctorCheck = (dir: string, host: Host) => (JSON.parse(ward(['doctor', '--json'], { cwd: dir }).stdout) as Doctor).checks.find((c) => c.name === host.check);

describe.each(HOSTS)('ward init --agent $agent', (host) => {
  it("merges its hook into the host's hooks file, keeps the user's hooks, writes the documented shape, and a second run changes nothing", () => {
    const dir = tempDir();
    mkdirSync(dirname(join(dir, host.file)), { recursive: true });
    writeFileSync(join(dir, host.file), JSON.stringify(host.mine));
    const first = ward(['init', '--agent', host.agent, '--json'], { cwd: dir });
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).files).toEqual([
      { path: '.ward.yaml', action: 'written' },
      { path: host.file, action: 'updated' },
    ]);
    // What is left to do in the host: trust the hook in Codex; give Copilot's coding agent Ward too.
    expect(JSON.parse(first.stdout).notes).toEqual([expect.stringContaining(host.agent === 'codex' ? 'open /hooks in Codex' : "Copilot's coding agent")]);
    const written = readFile(dir, host);
    expect(host.schemaProblems(written)).toEqual([]);
    // The user's hooks are all still there, Ward's added after them.
    for (const [event, entries] of Object.entries(host.mine['hooks'] as Json)) {
      expect(((written['hooks'] as Json)[event] as unknown[]).slice(0, (entries as unknown[]).length)).toEqual(entries);
    }
    expect(host.command(written)).toContain(join(REPO, 'bin', 'ward.js'));
    expect(existsSync(join(dir, '.ward', '.gitignore'))).toBe(true);
    const before = readFileSync(join(dir, host.file), 'utf8');
    const second = ward(['init', '--agent', host.agent, '--json'], { cwd: dir });
    expect(JSON.parse(second.stdout).files).toEqual([
      { path: '.ward.yaml', action: 'kept' },
      { path: host.file, action: 'unchanged' },
    ]);
    expect(readFileSync(join(dir, host.file), 'utf8')).toBe(before);
    expect(doctorCheck(dir, host)).toMatchObject({ status: 'pass' });
  });

  it('the registered command decides as the host runs it, and blocks in the host’s way when Ward cannot start', () => {
    const dir = tempDir();
    expect(ward(['init', '--agent', host.agent], { cwd: dir }).code).toBe(0);
    // baseline-lowrisk asks before commands; neither host can ask, so the call is refused.
    const decided = runRegistered(dir, host);
    expect(decided.status, decided.stderr).toBe(0);
    expect(host.denied(decided.stdout)).toBe(true);
    const broken = runRegistered(dir, host, host.command(readFile(dir, host)).replace(join(REPO, 'bin', 'ward.js'), '/nowhere/bin/ward.js'));
    if (host.agent === 'codex') {
      // Codex blocks on exit 2 only with a reason on stderr.
      expect(broken.status).toBe(2);
      expect(broken.stderr).toContain('Ward hook failed to start (fail closed)');
    } else {
      // Copilot never blocks on an exit code: the deny is on stdout.
      expect(broken.status).toBe(0);
      const deny = { permissionDecision: 'deny', permissionDecisionReason: 'Ward hook failed to start (fail closed)' };
      expect(JSON.parse(broken.stdout)).toEqual(deny);
      // A Ward that printed an answer and then failed: only the deny reaches Copilot (one JSON value).
      const printedThenFailed = runRegistered(dir, host, host.command(readFile(dir, host)).replace(/^out=\$\(.*?\)/, `out=$(echo '{"permissionDecision":"allow"}'; exit 1)`));
      expect(printedThenFailed.status).toBe(0);
      expect(JSON.parse(printedThenFailed.stdout)).toEqual(deny);
    }
  });

  it('--dry-run prints the file and writes nothing; --hook http is refused (no HTTP hooks)', () => {
    const dir = tempDir();
    const dry = ward(['init', '--agent', host.agent, '--dry-run', '--json'], { cwd: dir });
    expect(dry.code, dry.stderr).toBe(0);
    expect(existsSync(join(dir, host.file))).toBe(false);
    expect(existsSync(join(dir, '.ward.yaml'))).toBe(false);
    const out = JSON.parse(dry.stdout) as { files: unknown; settings: Json };
    expect(out.files).toEqual([
      { path: '.ward.yaml', action: 'would write' },
      { path: host.file, action: 'would write' },
    ]);
    expect(host.command(out.settings)).toContain(` hook ${host.agent} `);
    const http = ward(['init', '--agent', host.agent, '--hook', 'http'], { cwd: dir });
    expect(http.code).toBe(6);
    expect(http.stderr).toContain('--hook http is not available');
    expect(existsSync(join(dir, host.file))).toBe(false);
  });
});

describe('ward doctor: codex_hook and copilot_hook', () => {
  const write = (host: Host, content: unknown) => {
    const dir = tempDir();
    mkdirSync(dirname(join(dir, host.file)), { recursive: true });
    writeFileSync(join(dir, host.file), JSON.stringify(content));
    return dir;
  };
  const bin = join(REPO, 'bin', 'ward.js');

  it('says nothing without the file; fails one without Ward, or that cannot be read', () => {
    for (const host of HOSTS) {
      expect(doctorCheck(tempDir(), host)).toBeUndefined();
      expect(doctorCheck(write(host, host.mine), host)).toMatchObject({ status: 'fail', message: expect.stringContaining('no Ward'), fix_command: expect.stringMatching(new RegExp(` init --agent ${host.agent}$`)) });
      const bad = tempDir();
      mkdirSync(dirname(join(bad, host.file)), { recursive: true });
      writeFileSync(join(bad, host.file), '{"hooks": ');
      expect(doctorCheck(bad, host)).toMatchObject({ status: 'fail', message: expect.stringContaining('cannot be read') });
    }
  });

  it('Codex: fails a hook that fails open (no reason on stderr, async), covers only some tools, runs npx', () => {
    const codex = HOSTS[0]!;
    const dir = write(codex, {
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: `npx ward hook codex --policy p || exit 2`, async: true }] }] },
    });
    const check = doctorCheck(dir, codex)!;
    expect(check.status).toBe('fail');
    for (const problem of ['>&2; exit 2; }', 'is async', 'matches only "Bash"', 'npx ward']) expect(check.message).toContain(problem);
    const ok = write(codex, { hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: `node ${bin} hook codex --policy p || { echo 'no' >&2; exit 2; }` }] }] } });
    expect(doctorCheck(ok, codex)).toMatchObject({ status: 'pass' });
  });

  it('Copilot: fails a hook without the printed deny, a wrong version, a missing bin', () => {
    const copilot = HOSTS[1]!;
    const dir = write(copilot, { version: 2, hooks: { preToolUse: [{ type: 'command', bash: `node /nowhere/bin/ward.js hook copilot --policy .ward.yaml || exit 2` }] } });
    const check = doctorCheck(dir, copilot)!;
    expect(check.status).toBe('fail');
    for (const problem of ['"version" is 2', `|| echo '{"permissionDecision":"deny",…}'`, '/nowhere/bin/ward.js does not exist']) expect(check.message).toContain(problem);
    // The older form printed Ward's answer and then the deny when Ward failed after printing.
    const twice = write(copilot, { version: 1, hooks: { preToolUse: [{ type: 'command', bash: `node ${bin} hook copilot --policy .ward.yaml || echo '{"permissionDecision":"deny"}'` }] } });
    expect(doctorCheck(twice, copilot)).toMatchObject({ status: 'fail', message: expect.stringContaining('must not print twice') });
  });
});
