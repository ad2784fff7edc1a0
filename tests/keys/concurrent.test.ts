import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadOrCreateDefaultKey } from '../../src/keys/index.js';
import { distModule, runConcurrently } from '../trace/spawn.js';

describe('default key creation across processes', () => {
  it('gives every one of 10 simultaneous first uses the same key, and leaves one key file', async () => {
    const state = mkdtempSync(join(tmpdir(), 'ward-race-'));
    const code = `
      import { resolveSigningKey } from ${JSON.stringify(distModule('keys/index.js'))};
      const r = resolveSigningKey({ mode: 'default', stateDir: process.argv[1], env: {}, cwd: '/' });
      process.stdout.write(r.key.keyId + ' ' + r.created);`;
    const outputs = await runConcurrently(code, Array.from({ length: 10 }, () => [state]));
    const ids = new Set(outputs.map((line) => line.split(' ')[0]));
    expect(ids.size).toBe(1);
    expect(outputs.filter((line) => line.endsWith(' true')).length).toBeLessThanOrEqual(1);
    expect(loadOrCreateDefaultKey(state).key.keyId).toBe([...ids][0]);
    expect(readdirSync(join(state, 'keys')).sort()).toEqual(['ward_private.key', 'ward_public.key']);
  });
});
