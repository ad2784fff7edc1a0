// The PostgreSQL test harness works from a checkout in a private directory: as root the server runs
// as `nobody`, which cannot execute binaries under a 0700 directory, so it gets a reachable copy.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { reachableBy } from '../../scripts/postgres-server.js';

/** A stand-in installation (bin/, lib/ with a relative symlink) inside a private directory. */
function privateInstall() {
  const home = mkdtempSync(join(tmpdir(), 'ward-private-'));
  chmodSync(home, 0o700);
  const install = join(home, 'native');
  for (const d of ['bin', 'lib']) mkdirSync(join(install, d), { recursive: true });
  writeFileSync(join(install, 'lib', 'libx.so.1.2'), 'lib');
  symlinkSync('libx.so.1.2', join(install, 'lib', 'libx.so.1'));
  for (const b of ['initdb', 'postgres']) writeFileSync(join(install, 'bin', b), `#!/bin/sh\ncat "$(dirname "$0")/../lib/libx.so.1"\n`, { mode: 0o755 });
  return { initdb: join(install, 'bin', 'initdb'), postgres: join(install, 'bin', 'postgres') };
}

describe('reachableBy', () => {
  it('keeps the binaries when the server runs as the current user', () => {
    const bin = privateInstall();
    expect(reachableBy(undefined, bin)).toEqual(bin);
  });

  it('for a server run as another user, copies a private installation to where that user can run it, relative links intact', () => {
    const bin = privateInstall();
    const nobody = { uid: 65534, gid: 65534 };
    // Only root can start a process as nobody; elsewhere the copy is checked as this user.
    const asServer = process.getuid?.() === 0 ? nobody : {};
    if (process.getuid?.() === 0) expect(spawnSync(bin.initdb, { ...nobody }).error).toMatchObject({ code: 'EACCES' });
    const reachable = reachableBy(nobody, bin);
    expect(dirname(dirname(reachable.initdb))).not.toBe(dirname(dirname(bin.initdb)));
    expect(statSync(dirname(dirname(reachable.initdb))).mode & 0o005).toBe(0o005);
    const ran = spawnSync(reachable.initdb, { ...asServer, encoding: 'utf8' });
    expect(ran.status, ran.stderr).toBe(0);
    expect(ran.stdout).toBe('lib');
    // Asked again (another test file), the same copy is used.
    expect(reachableBy(nobody, bin)).toEqual(reachable);
  });
});
