import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { tempDir, ward } from '../cli/run.js';
import { BASELINE_POLICY } from './replicas.js';

// Starting a replica: the store location is checked before anything else, and a database that
// cannot be reached is an error at start (exit 1), not a replica that serves without its store.

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe('ward serve --store: start-up', () => {
  it('refuses a password on the command line (exit 6) and names the safe ways', () => {
    const dir = tempDir('ward-serve-pw-');
    const r = ward(['serve', '--policy', BASELINE_POLICY, '--listen', '127.0.0.1:0', '--store', 'postgres://ward:secret@127.0.0.1:1/ward', '--json'], { cwd: dir });
    expect(r.code).toBe(6);
    expect(r.stdout + r.stderr).toMatch(/refusing a password in --store/);
    expect(r.stdout + r.stderr).not.toContain('secret');
  });

  it('exits 1 (store unavailable, retryable) when PostgreSQL cannot be reached, and never listens', async () => {
    const dir = tempDir('ward-serve-down-');
    const port = await closedPort();
    const r = ward(['serve', '--policy', BASELINE_POLICY, '--listen', '127.0.0.1:0', '--json'], {
      cwd: dir,
      env: { WARD_STORE_URL: `postgres://ward@127.0.0.1:${port}/ward`, PGPASSWORD: 'x', PGCONNECT_TIMEOUT: '2' },
    });
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain('"url"');
    expect(r.stdout + r.stderr).toMatch(/unavailable/);
  }, 30_000);
});
