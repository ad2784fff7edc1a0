// `ward sandbox --agent claude-code` (issue 26, "Confinement where a gate cannot see"): Claude Code's
// own sandbox block, written from the policy into .claude/settings.json, other settings kept.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePolicyYaml } from '../../src/policy/load.js';
import { claudeSandboxSettings } from '../../src/policy/claude-sandbox.js';
import { tempDir, ward } from './run.js';

const POLICY = `default_verdict: block
rules:
  - name: files
    priority: 10
    effect: allow
    match: { target_kinds: [path] }
    endpoint:
      path_denylist: [/etc/shadow, "/home/*/.ssh/*", "secrets/**", "/srv/a/../b/**"]
      path_allowlist: ["/srv/**"]
  - name: net
    priority: 20
    effect: allow
    match: { target_kinds: [url] }
    endpoint:
      domain_allowlist: [api.github.com, "*.npmjs.org", "10.0.0.0/8", "class:private"]
      domain_denylist: ["class:metadata"]
`;

describe('ward sandbox --agent claude-code', () => {
  it('derives denied paths and allowed domains, and names what it cannot express', () => {
    const { sandbox, notExpressed } = claudeSandboxSettings(parsePolicyYaml(POLICY).policy, '/work/repo');
    const denied = ['//etc/shadow', '//home/*/.ssh/*', '//srv/b/**', '//work/repo/secrets/**'];
    expect(sandbox).toEqual({
      enabled: true,
      allowUnsandboxedCommands: false,
      filesystem: { denyRead: denied, denyWrite: denied },
      network: { allowedDomains: ['*.npmjs.org', 'api.github.com'] },
    });
    expect(notExpressed.join('\n')).toContain('"10.0.0.0/8"');
    expect(notExpressed.join('\n')).toContain('"class:private"');
    expect(notExpressed.join('\n')).toContain('domain_denylist "class:metadata"');
    expect(notExpressed.join('\n')).toContain('path_allowlist "/srv/**"');
    // Without an absolute workspace a relative pattern cannot be placed: said, not guessed.
    expect(claudeSandboxSettings(parsePolicyYaml(POLICY).policy, '').notExpressed.join('\n')).toContain('"secrets/**": a relative pattern needs an absolute workspace');
  });

  it('writes the sandbox block into .claude/settings.json and keeps every other key', () => {
    const cwd = tempDir('ward-sandbox-');
    writeFileSync(join(cwd, '.ward.yaml'), POLICY);
    mkdirSync(join(cwd, '.claude'));
    const hooks = { PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: 'ward hook claude-code' }] }] };
    writeFileSync(join(cwd, '.claude', 'settings.json'), JSON.stringify({ hooks, sandbox: { enabled: false, excludedCommands: ['docker'] } }));
    const r = ward(['sandbox', '--agent', 'claude-code'], { cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('not expressed in the sandbox');
    const settings = JSON.parse(readFileSync(join(cwd, '.claude', 'settings.json'), 'utf8')) as Record<string, unknown>;
    expect(settings['hooks']).toEqual(hooks);
    const sandbox = settings['sandbox'] as Record<string, unknown>;
    expect(sandbox['enabled']).toBe(true);
    expect(sandbox['excludedCommands']).toBeUndefined(); // the block is Ward's: a command let out of it is not kept
    expect((sandbox['filesystem'] as Record<string, string[]>)['denyRead']).toContain(`/${cwd}/secrets/**`);

    const printed = ward(['sandbox', '--agent', 'claude-code', '--print', '--json'], { cwd });
    expect(JSON.parse(printed.stdout)['sandbox']).toEqual(sandbox);
  });

  it('refuses an unknown agent, a settings file that is not a JSON object, and an invalid policy (exit 6), writing nothing', () => {
    const cwd = tempDir('ward-sandbox-');
    writeFileSync(join(cwd, '.ward.yaml'), POLICY);
    expect(ward(['sandbox', '--agent', 'codex'], { cwd }).code).toBe(6);
    mkdirSync(join(cwd, '.claude'));
    writeFileSync(join(cwd, '.claude', 'settings.json'), '[1]');
    expect(ward(['sandbox', '--agent', 'claude-code'], { cwd }).code).toBe(6);
    expect(readFileSync(join(cwd, '.claude', 'settings.json'), 'utf8')).toBe('[1]');
    writeFileSync(join(cwd, '.ward.yaml'), 'rules: [{ name: x, effect: maybe }]\n');
    writeFileSync(join(cwd, '.claude', 'settings.json'), '{}');
    expect(ward(['sandbox', '--agent', 'claude-code'], { cwd }).code).toBe(6);
    expect(readFileSync(join(cwd, '.claude', 'settings.json'), 'utf8')).toBe('{}');
  });
});
