import { readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { REASON_CODES } from '../src/gate/reason-codes.js';
import { REPO, tempDir } from './cli/run.js';

const readme = readFileSync(join(REPO, 'README.md'), 'utf8');

/** Commands in the README's sh blocks that start with `node bin/ward.js`, with their `# exit N`. */
function readmeCommands(): { command: string; exit: number }[] {
  const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks
    .flatMap((b) => b.split('\n'))
    .filter((line) => line.startsWith('node bin/ward.js'))
    .map((line) => {
      const exit = /#\s*exit (\d+)/.exec(line);
      return { command: line.replace(/\s+#.*$/, ''), exit: exit ? Number(exit[1]) : 0 };
    });
}

describe('README', () => {
  it('shows the set-up commands', () => {
    expect(readme).toContain('npm ci');
    expect(readme).toContain('npm start');
    expect(readme).toContain('npm test');
  });

  it('every quickstart command runs literally, in order, with the exit code it states', () => {
    const cwd = tempDir('ward-readme-');
    for (const entry of ['bin', 'dist', 'policies', 'examples', 'package.json', 'node_modules']) {
      symlinkSync(join(REPO, entry), join(cwd, entry));
    }
    const commands = readmeCommands();
    expect(commands.length).toBeGreaterThanOrEqual(4);
    for (const { command, exit } of commands) {
      const r = spawnSync('sh', ['-c', command], { cwd, encoding: 'utf8', env: { ...process.env, WARD_STATE_DIR: '' } });
      expect(r.status, `${command}\n${r.stdout}\n${r.stderr}`).toBe(exit);
    }
  });

  it('the block example output is what the first command prints', () => {
    const cwd = tempDir('ward-readme-');
    for (const entry of ['bin', 'dist', 'policies', 'examples', 'package.json', 'node_modules']) {
      symlinkSync(join(REPO, entry), join(cwd, entry));
    }
    const first = readmeCommands()[0]!;
    const r = spawnSync('sh', ['-c', first.command], { cwd, encoding: 'utf8', env: { ...process.env, WARD_STATE_DIR: '' } });
    const shown = /```text\n([\s\S]*?)\.\.\.\n```/.exec(readme)![1]!;
    expect(r.stdout.startsWith(shown)).toBe(true);
  });
});

describe('docs/reason-codes.md', () => {
  it('documents every registered reason code and its violation', () => {
    const doc = readFileSync(join(REPO, 'docs', 'reason-codes.md'), 'utf8');
    for (const [code, info] of Object.entries(REASON_CODES)) {
      const row = doc.split('\n').find((line) => line.startsWith(`| \`${code}\` |`));
      expect(row, code).toBeDefined();
      if (info.violation) expect(row, code).toContain(`\`${info.violation}\``);
    }
  });
});
