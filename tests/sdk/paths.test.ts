import { linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Ward, WardBlockedError, intent } from '../../src/index.js';
import { bareDir } from '../cli/run.js';

/**
 * The SDK sees the disk the guarded tool uses, so it resolves links like the hook and the proxy
 * (issue 26, finding 2): a guarded read through a symlink or a hard link to a denied file never runs.
 */
describe('SDK: paths resolved on the file system', () => {
  const dir = bareDir('ward-sdk-paths-');
  mkdirSync(join(dir, '.ward'));
  mkdirSync(join(dir, 'secrets'));
  writeFileSync(join(dir, 'secrets', 'key.pem'), 'SECRET');
  writeFileSync(join(dir, 'notes.txt'), 'hello');
  symlinkSync('secrets', join(dir, 'pub'));
  linkSync(join(dir, 'secrets', 'key.pem'), join(dir, 'copy.pem'));
  const policy = join(dir, 'policy.yaml');
  writeFileSync(policy, 'default_verdict: allow\nrules: [{ name: files, effect: allow, match: { target_kinds: [path] }, endpoint: { path_denylist: ["secrets/**"] } }]\n');

  const readIntent = (path: string) =>
    intent.tool('fs.read').args({ path }).target({ kind: 'path', value: path, operation: 'read' }).context({ identity: 'agent.sdk', workspace: dir, risk_class: 'low' }).build();

  it.each(['secrets/key.pem', 'pub/key.pem', 'copy.pem'])('a guarded read of %s is blocked and the tool never runs', async (path) => {
    const ward = new Ward({ policy, cwd: dir });
    let ran = 0;
    const read = ward.guardTool((p: string) => {
      ran++;
      return readFileSync(join(dir, p), 'utf8');
    }, (p: string) => readIntent(p));
    await expect(read(path)).rejects.toBeInstanceOf(WardBlockedError);
    expect(ran).toBe(0);
  });

  it('a plain file is read', async () => {
    const ward = new Ward({ policy, cwd: dir });
    const read = ward.guardTool((p: string) => readFileSync(join(dir, p), 'utf8'), (p: string) => readIntent(p));
    await expect(read('notes.txt')).resolves.toBe('hello');
  });
});
