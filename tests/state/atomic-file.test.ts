import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileAtomicAsync, writeTempAsync } from '../../src/state/atomic-file.js';
import { tempDir } from '../cli/run.js';

describe('async durable writes', () => {
  it('writeFileAtomicAsync creates missing directories, replaces the file whole, mode 0600, no temporary left', async () => {
    const dir = join(tempDir('ward-atomic-'), 'a', 'b');
    const path = join(dir, 'trace.json');
    await writeFileAtomicAsync(path, 'first');
    await writeFileAtomicAsync(path, 'second');
    expect(readFileSync(path, 'utf8')).toBe('second');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['trace.json']);
  });

  it('writeFileAtomicAsync fails as an IO error naming the path when the directory cannot be made', async () => {
    const root = tempDir('ward-atomic-');
    writeFileSync(join(root, 'file'), 'x');
    await expect(writeFileAtomicAsync(join(root, 'file', 'trace.json'), 'x')).rejects.toMatchObject({ message: expect.stringMatching(/^write .*file\/trace\.json: /) });
  });

  it('writeTempAsync leaves the data under a hidden temporary name beside the target', async () => {
    const dir = tempDir('ward-atomic-');
    const temp = await writeTempAsync(join(dir, 'x.json'), 'data');
    expect(temp.startsWith(join(dir, '.x.json.'))).toBe(true);
    expect(readFileSync(temp, 'utf8')).toBe('data');
  });
});
