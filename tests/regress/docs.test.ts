import { spawnSync } from 'node:child_process';
import { readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REGRESS_REASON_CODES } from '../../src/regress/index.js';
import { REPO, tempDir } from '../cli/run.js';

const doc = readFileSync(join(REPO, 'docs', 'regress.md'), 'utf8');

/** `| \`code\` | ...` rows of the reason-code table. */
function documentedCodes(): string[] {
  const section = doc.slice(doc.indexOf('## Reason codes'));
  return [...section.matchAll(/^\| `([a-z0-9_]+)` \|/gm)].map((m) => m[1]!);
}

describe('docs/regress.md', () => {
  it('documents every regress reason code, and only those', () => {
    expect(documentedCodes().sort()).toEqual(Object.keys(REGRESS_REASON_CODES).sort());
  });

  it('every reason-code row names the outcome the registry gives', () => {
    for (const [code, info] of Object.entries(REGRESS_REASON_CODES)) {
      const row = doc.slice(doc.indexOf('## Reason codes')).split('\n').find((l) => l.startsWith(`| \`${code}\` |`))!;
      expect(row.split('|')[3]!.trim(), code).toBe(info.outcome);
    }
  });

  for (const section of ['## A session that runs', '## Policy replay']) {
    it(`the "${section.slice(3)}" example runs literally, in order, with the exit codes it states`, () => {
      const cwd = tempDir('ward-regress-doc-');
      for (const entry of ['bin', 'dist', 'policies', 'examples', 'fixtures', 'package.json', 'node_modules']) symlinkSync(join(REPO, entry), join(cwd, entry));
      const block = new RegExp(`${section}[\\s\\S]*?\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(doc)![1]!;
      const lines = block.split('\n').filter((l) => l.startsWith('node bin/ward.js'));
      expect(lines.length).toBeGreaterThanOrEqual(5);
      for (const line of lines) {
        const exit = /#\s*exit (\d+)/.exec(line);
        const r = spawnSync('sh', ['-c', line.replace(/\s+#.*$/, '')], { cwd, encoding: 'utf8', env: { ...process.env, WARD_STATE_DIR: '' } });
        expect(r.status, `${line}\n${r.stdout}\n${r.stderr}`).toBe(exit ? Number(exit[1]) : 0);
      }
    }, 120_000);
  }
});
