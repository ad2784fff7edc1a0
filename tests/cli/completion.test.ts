import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir, ward } from './run.js';

/** What bash offers after typing `words` (the last one being completed), with the script sourced. */
function bashComplete(script: string, words: string[]): string[] {
  const file = join(tempDir(), 'ward.bash');
  writeFileSync(file, script);
  const quoted = words.map((w) => `'${w}'`).join(' ');
  const r = spawnSync('bash', ['-c', `source '${file}'; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _ward_complete; printf '%s\\n' "\${COMPREPLY[@]}"`], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.split('\n').filter(Boolean);
}

describe('ward completion', () => {
  const bash = ward(['completion', 'bash'], { cwd: tempDir() });

  it('bash: completes commands, subcommands and the options of the command typed so far', () => {
    expect(bash.code, bash.stderr).toBe(0);
    expect(bashComplete(bash.stdout, ['ward', ''])).toEqual(expect.arrayContaining(['gate', 'hook', 'mcp', 'completion', '--version']));
    expect(bashComplete(bash.stdout, ['ward', 'gate', 'ev'])).toEqual(['eval']);
    expect(bashComplete(bash.stdout, ['ward', 'gate', 'eval', '--pol'])).toEqual(['--policy']);
    // Options already typed do not change which command is being completed.
    expect(bashComplete(bash.stdout, ['ward', 'mcp', '--json', 'pro'])).toEqual(['proxy']);
    expect(bashComplete(bash.stdout, ['ward', 'mcp', 'proxy', '--pin'])).toContain('--pin-tools');
  });

  it('zsh wraps the bash function; fish lists each command under its parent', () => {
    const zsh = ward(['completion', 'zsh'], { cwd: tempDir() });
    expect(zsh.stdout.startsWith('#compdef ward\nautoload -U +X bashcompinit && bashcompinit\n')).toBe(true);
    expect(zsh.stdout).toContain('complete -o default -F _ward_complete ward');
    const fish = ward(['completion', 'fish'], { cwd: tempDir() }).stdout;
    expect(fish).toContain("complete -c ward -f -n '__fish_use_subcommand' -a '");
    expect(fish).toMatch(/complete -c ward -f -n '__fish_seen_subcommand_from gate; and not __fish_seen_subcommand_from [^']*eval[^']*' -a '[^']*eval/);
    expect(fish).toContain("complete -c ward -n '__fish_seen_subcommand_from eval' -l policy");
  });

  it('refuses an unknown shell with the choices (exit 6)', () => {
    const r = ward(['completion', 'powershell'], { cwd: tempDir() });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('bash, zsh, fish');
  });
});
