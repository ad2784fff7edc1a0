import { spawnSync } from 'node:child_process';
import { readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, tempDir } from './cli/run.js';

/**
 * Concept pages whose copy-paste examples run literally. Add a page here and its ```sh lines that
 * start with `node bin/ward.js` (or `node examples/`) run in order, in one fresh directory, each
 * with the exit code its trailing `# exit N` states (0 when none).
 */
const PAGES = [
  'docs/getting-started.md',
  'docs/intents.md',
  'docs/sdk.md',
  'docs/policies.md',
  'docs/context-evidence.md',
  'docs/traces-and-keys.md',
  'docs/packs.md',
  'docs/reason-codes.md',
  'docs/exit-codes.md',
  'docs/contextos-and-context-state.md',
];

/** What the commands see: the checkout's runnable parts, nothing else (like a reader's clone). */
const LINKED = ['bin', 'dist', 'policies', 'examples', 'fixtures', 'package.json', 'node_modules'];

interface DocCommand {
  command: string;
  exit: number;
}

function pageCommands(markdown: string): DocCommand[] {
  const blocks = [...markdown.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
  return blocks
    .flatMap((b) => b.split('\n'))
    .filter((line) => line.startsWith('node bin/ward.js') || line.startsWith('node examples/'))
    .map((line) => {
      const exit = /#\s*exit (\d+)\s*$/.exec(line);
      return { command: line.replace(/\s+#.*$/, ''), exit: exit ? Number(exit[1]) : 0 };
    });
}

/** Code blocks introduced by `<!-- file: path -->` must be that file, byte for byte. */
function includedFiles(markdown: string): { path: string; block: string }[] {
  return [...markdown.matchAll(/^<!-- file: (\S+) -->\n```\w*\n([\s\S]*?)^```/gm)].map((m) => ({ path: m[1]!, block: m[2]! }));
}

function sandbox(): string {
  const cwd = tempDir('ward-docs-');
  for (const entry of LINKED) symlinkSync(join(REPO, entry), join(cwd, entry));
  return cwd;
}

describe.each(PAGES)('%s', (page) => {
  const markdown = readFileSync(join(REPO, page), 'utf8');

  it('has a copy-paste example, and every command in it runs literally with the exit code it states', () => {
    const commands = pageCommands(markdown);
    expect(commands.length, `${page} needs at least one runnable sh example`).toBeGreaterThan(0);
    const cwd = sandbox();
    for (const { command, exit } of commands) {
      const r = spawnSync('sh', ['-c', command], { cwd, encoding: 'utf8', env: { ...process.env, WARD_STATE_DIR: '' } });
      expect(r.status, `${page}: ${command}\n${r.stdout}\n${r.stderr}`).toBe(exit);
    }
  });

  it('quotes included example files exactly', () => {
    for (const { path, block } of includedFiles(markdown)) {
      expect(block, `${page} quotes ${path}`).toBe(readFileSync(join(REPO, path), 'utf8'));
    }
  });
});

describe('pageCommands', () => {
  it('reads only node bin/ward.js and node examples/ lines of sh blocks, with their exit codes', () => {
    const md = '```sh\nnode bin/ward.js a   # exit 3\nward b\nnode examples/x.mjs\n```\n```text\nnode bin/ward.js c\n```\n';
    expect(pageCommands(md)).toEqual([
      { command: 'node bin/ward.js a', exit: 3 },
      { command: 'node examples/x.mjs', exit: 0 },
    ]);
  });
});
