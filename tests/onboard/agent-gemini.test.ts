// `ward init --agent gemini-cli`: a starter policy, .ward/, and Ward's BeforeTool hook in the
// project's .gemini/settings.json — merged, idempotent, in the shape Gemini CLI's hooks reference
// documents, checked by doctor — and the hook it registers works when Gemini CLI runs it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, tempDir, ward } from '../cli/run.js';

const SETTINGS = join('.gemini', 'settings.json');
const read = (dir: string) => readFileSync(join(dir, SETTINGS), 'utf8');
const settingsOf = (dir: string) => JSON.parse(read(dir)) as Record<string, unknown> & { hooks: Record<string, { matcher?: string; hooks: Record<string, unknown>[] }[]> };

/**
 * The hook definition and hook configuration tables of Gemini CLI's hooks reference
 * (google-gemini/gemini-cli docs/hooks/reference.md "Configuration schema"): the fields, their
 * types, which are required; nothing else. Returns what does not conform.
 */
function schemaProblems(settings: ReturnType<typeof settingsOf>): string[] {
  const problems: string[] = [];
  const definition: Record<string, string> = { matcher: 'string', sequential: 'boolean', hooks: 'object' };
  const configuration: Record<string, string> = { type: 'string', command: 'string', name: 'string', timeout: 'number', description: 'string' };
  for (const [event, groups] of Object.entries(settings.hooks)) {
    if (!Array.isArray(groups)) problems.push(`${event} is not an array`);
    for (const group of groups) {
      for (const [k, v] of Object.entries(group)) if (typeof v !== definition[k]) problems.push(`${event} group field ${k}: ${typeof v}`);
      if (!Array.isArray(group.hooks)) problems.push(`${event} group without hooks`);
      for (const hook of group.hooks) {
        for (const [k, v] of Object.entries(hook)) if (typeof v !== configuration[k]) problems.push(`${event} hook field ${k}: ${typeof v}`);
        if (hook['type'] !== 'command') problems.push(`${event} hook type ${String(hook['type'])}: only "command" is supported`);
        if (typeof hook['command'] !== 'string') problems.push(`${event} command hook without command`);
      }
    }
  }
  return problems;
}

/** Run the registered command as Gemini CLI does: through a shell, from a subdirectory, the event on stdin. */
function runHook(dir: string, event: Record<string, unknown>) {
  const command = settingsOf(dir).hooks['BeforeTool']!.flatMap((g) => g.hooks).find((h) => h['name'] === 'ward')!['command'] as string;
  const r = spawnSync('sh', ['-c', command], {
    cwd: join(dir, 'sub'),
    input: JSON.stringify({ session_id: 's1', transcript_path: '/tmp/t.json', cwd: dir, hook_event_name: 'BeforeTool', timestamp: '2026-11-28T08:30:00.000Z', ...event }),
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', WARD_STATE_DIR: '' }, // Gemini CLI sanitizes the hook's environment
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { decision?: string; reason?: string };
}

interface Doctor {
  checks: { name: string; status: string; message: string; fix_command?: string }[];
}
const geminiCheck = (dir: string) => (JSON.parse(ward(['doctor', '--json'], { cwd: dir }).stdout) as Doctor).checks.find((c) => c.name === 'gemini_cli_hook');

describe('ward init --agent gemini-cli', () => {
  it('merges its hook into existing settings, keeps the rest, writes the documented schema, and a second run changes nothing', () => {
    const dir = tempDir();
    mkdirSync(join(dir, '.gemini'));
    const mine = { matcher: 'write_file', hooks: [{ name: 'mine', type: 'command', command: 'echo {}' }] };
    writeFileSync(join(dir, SETTINGS), JSON.stringify({ model: { name: 'gemini-2.5-pro' }, hooks: { BeforeTool: [mine], AfterTool: [mine] } }));
    const first = ward(['init', '--agent', 'gemini-cli', '--json'], { cwd: dir });
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).files).toEqual([
      { path: '.ward.yaml', action: 'written' },
      { path: '.gemini/settings.json', action: 'updated' },
    ]);
    const settings = settingsOf(dir);
    expect(settings['model']).toEqual({ name: 'gemini-2.5-pro' });
    expect(settings.hooks['AfterTool']).toEqual([mine]);
    expect(settings.hooks['BeforeTool']![0]).toEqual(mine);
    const group = settings.hooks['BeforeTool']![1]!;
    expect(group.matcher).toBe('.*');
    expect(group.hooks).toEqual([
      {
        name: 'ward',
        type: 'command',
        command: expect.stringMatching(/^\S*node\S* '?\/\S*bin\/ward\.js'? hook gemini-cli --policy '?\/\S+\/\.ward\.yaml'? --state-dir '?\/\S+\/\.ward'? \|\| exit 2$/),
        timeout: 10000,
        description: expect.any(String),
      },
    ]);
    expect(String(group.hooks[0]!['command'])).toContain(join(dir, '.ward.yaml'));
    expect(schemaProblems(settings)).toEqual([]);
    expect(existsSync(join(dir, '.ward', '.gitignore'))).toBe(true);
    const before = read(dir);
    const second = ward(['init', '--agent', 'gemini-cli', '--json'], { cwd: dir });
    expect(JSON.parse(second.stdout).files).toEqual([
      { path: '.ward.yaml', action: 'kept' },
      { path: '.gemini/settings.json', action: 'unchanged' },
    ]);
    expect(read(dir)).toBe(before);
  });

  it('the registered hook works as Gemini CLI runs it: reads pass, commands and writes are refused with the reason, secrets are denied', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'sub'));
    expect(ward(['init', '--agent', 'gemini-cli'], { cwd: dir }).code).toBe(0);
    expect(readFileSync(join(dir, '.ward.yaml'), 'utf8')).toBe(readFileSync(join(REPO, 'policies', 'baseline-lowrisk.yaml'), 'utf8'));
    expect(runHook(dir, { tool_name: 'read_file', tool_input: { file_path: join(dir, 'README.md') } })).toEqual({});
    // baseline-lowrisk asks before commands; BeforeTool cannot ask, so the call is refused and the agent told why.
    expect(runHook(dir, { tool_name: 'run_shell_command', tool_input: { command: 'ls' } })).toMatchObject({ decision: 'deny', reason: expect.stringMatching(/^Ward: approval required by policy/) });
    expect(runHook(dir, { tool_name: 'read_file', tool_input: { file_path: '/etc/shadow' } })).toMatchObject({ decision: 'deny', reason: expect.stringMatching(/^Ward: blocked by policy/) });
  });

  it('--dry-run prints the settings and writes nothing; --hook http is refused (Gemini CLI has no HTTP hooks)', () => {
    const dir = tempDir();
    const dry = ward(['init', '--agent', 'gemini-cli', '--dry-run', '--json'], { cwd: dir });
    expect(dry.code, dry.stderr).toBe(0);
    expect(existsSync(join(dir, '.gemini'))).toBe(false);
    expect(existsSync(join(dir, '.ward.yaml'))).toBe(false);
    const out = JSON.parse(dry.stdout) as { files: unknown; settings: ReturnType<typeof settingsOf> };
    expect(out.files).toEqual([
      { path: '.ward.yaml', action: 'would write' },
      { path: '.gemini/settings.json', action: 'would write' },
    ]);
    expect(out.settings.hooks['BeforeTool']![0]!.hooks[0]!['name']).toBe('ward');
    const http = ward(['init', '--agent', 'gemini-cli', '--hook', 'http'], { cwd: dir });
    expect(http.code).toBe(6);
    expect(http.stderr).toContain('--hook http is not available for Gemini CLI');
    expect(existsSync(join(dir, '.gemini'))).toBe(false);
  });

  it('refuses a settings file that is not a JSON object, writing nothing', () => {
    const dir = tempDir();
    mkdirSync(join(dir, '.gemini'));
    writeFileSync(join(dir, SETTINGS), '[1]');
    const r = ward(['init', '--agent', 'gemini-cli'], { cwd: dir });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('.gemini/settings.json');
    expect(readFileSync(join(dir, SETTINGS), 'utf8')).toBe('[1]');
    expect(existsSync(join(dir, '.ward.yaml'))).toBe(false);
  });
});

describe('ward doctor: gemini_cli_hook', () => {
  const write = (settings: unknown) => {
    const dir = tempDir();
    mkdirSync(join(dir, '.gemini'));
    writeFileSync(join(dir, SETTINGS), JSON.stringify(settings));
    return dir;
  };
  const hook = (command: string, extra: Record<string, unknown> = {}) => ({ name: 'ward', type: 'command', command, ...extra });

  it('says nothing for a project without Gemini CLI settings', () => {
    expect(geminiCheck(tempDir())).toBeUndefined();
  });

  it('fails settings without Ward\'s BeforeTool hook, and passes once init has run', () => {
    const dir = write({ hooks: { AfterTool: [{ matcher: '.*', hooks: [hook('node /x/bin/ward.js hook gemini-cli --policy p || exit 2')] }] } });
    const missing = geminiCheck(dir)!;
    expect(missing).toMatchObject({ status: 'fail', message: expect.stringContaining('no Ward BeforeTool hook is registered'), fix_command: expect.stringMatching(/ init --agent gemini-cli$/) });
    expect(ward(['init', '--agent', 'gemini-cli'], { cwd: dir }).code).toBe(0);
    expect(geminiCheck(dir)).toMatchObject({ status: 'pass' });
  });

  it('fails a hook that fails open, runs npx, covers only some tools, or is turned off', () => {
    const dir = write({
      hooksConfig: { disabled: ['ward'] },
      hooks: { BeforeTool: [{ matcher: 'write_file|replace', hooks: [hook('npx ward hook gemini-cli --policy .ward.yaml', { timeout: 5000 })] }] },
    });
    const check = geminiCheck(dir)!;
    expect(check.status).toBe('fail');
    for (const problem of ['`|| exit 2`', 'npx ward', 'matches only "write_file|replace"', 'hooksConfig.disabled']) expect(check.message).toContain(problem);
    const off = write({ hooksConfig: { enabled: false }, hooks: { BeforeTool: [{ matcher: '.*', hooks: [hook(`node ${join(REPO, 'bin', 'ward.js')} hook gemini-cli --policy p || exit 2`)] }] } });
    expect(geminiCheck(off)).toMatchObject({ status: 'fail', message: expect.stringContaining('hooksConfig.enabled is false') });
    const gone = write({ hooks: { BeforeTool: [{ hooks: [hook("node '/nowhere/bin/ward.js' hook gemini-cli --policy p || exit 2")] }] } });
    expect(geminiCheck(gone)).toMatchObject({ status: 'fail', message: expect.stringContaining('/nowhere/bin/ward.js does not exist') });
  });

  it('fails settings Gemini CLI cannot parse as a JSON object', () => {
    const dir = tempDir();
    mkdirSync(join(dir, '.gemini'));
    writeFileSync(join(dir, SETTINGS), '{"hooks": ');
    expect(geminiCheck(dir)).toMatchObject({ status: 'fail', message: expect.stringContaining('cannot be read') });
  });
});
