import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from './cli/run.js';

/* Issue 15: the documentation a new user reads after the quickstart says what is true. */

const read = (path: string) => readFileSync(join(REPO, path), 'utf8');

describe('docs a newcomer stumbled on', () => {
  it('approvals.md no longer says approve-script is missing', () => {
    expect(read('docs/approvals.md')).not.toMatch(/no `ward approve-script` command yet/);
  });

  it('daemon.md says what approval_tokens holds in a request body', () => {
    expect(read('docs/daemon.md')).toMatch(/`approval_tokens` and `delegation_tokens` are arrays/);
  });

  it('sdk.md installs the package tarball (never a checkout by path) and says the types need @types/node', () => {
    const sdk = read('docs/sdk.md');
    expect(sdk).toContain('install the package tarball');
    expect(sdk).not.toContain('npm install /path/to/ward');
    expect(sdk).toContain('`@types/node`');
  });

  it('the README says npm test takes minutes and that the replay SKIPPED line is expected', () => {
    const readme = read('README.md');
    expect(readme).toMatch(/npm test .*about \d+ minutes on a quiet 2-core machine \(docs\/testing\.md\)/);
    // Where the time goes: the measured slowest files, before and after.
    expect(read('docs/testing.md')).toMatch(/### The slowest files\n[\s\S]*\| `tests\/[^`]+\.test\.ts` \| \d+\.\d \|/);
    expect(readme).toContain('SKIPPED … no captured intent');
  });

  it('what the README and the daemon page leave in the repo root is ignored by git', () => {
    const ignored = read('.gitignore').split('\n');
    for (const entry of ['/.ward.yaml', '/decision.json', '/trace_block.json', '/evidence.zip']) expect(ignored).toContain(entry);
  });

  it('every locked package with an install script is allowed in package.json, so npm ci does not warn', () => {
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { hasInstallScript?: boolean }> };
    const allowed = (JSON.parse(read('package.json')) as { allowScripts?: Record<string, boolean> }).allowScripts ?? {};
    const withScripts = Object.entries(lock.packages)
      .filter(([, p]) => p.hasInstallScript)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(withScripts.length).toBeGreaterThan(0);
    for (const name of withScripts) expect(allowed[name], name).toBe(true);
  });
});
