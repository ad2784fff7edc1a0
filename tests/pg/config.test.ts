import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { redact, resolveStoreLocation } from '../../src/pg/index.js';

describe('store location', () => {
  it('is the local store when neither --store nor WARD_STORE_URL is set', () => {
    expect(resolveStoreLocation({ env: {} })).toEqual({ kind: 'level' });
  });

  it('takes --store over WARD_STORE_URL', () => {
    const loc = resolveStoreLocation({ flag: 'postgres://ward@db:5432/a', env: { WARD_STORE_URL: 'postgres://ward@db:5432/b' } });
    expect(loc).toMatchObject({ kind: 'postgres', config: { connectionString: 'postgres://ward@db:5432/a' } });
  });

  it('refuses a password in argv, and says where a password may come from', () => {
    expect(() => resolveStoreLocation({ flag: 'postgres://ward:s3cret@db/ward', env: {} })).toThrow(/refusing a password in --store/);
    try {
      resolveStoreLocation({ flag: 'postgres://ward:s3cret@db/ward', env: {} });
    } catch (err) {
      expect(String((err as { hint: string }).hint)).toMatch(/PGPASSWORD/);
      expect(String((err as Error).message)).not.toContain('s3cret');
    }
  });

  it('accepts a password in WARD_STORE_URL and never displays it', () => {
    const loc = resolveStoreLocation({ env: { WARD_STORE_URL: 'postgresql://ward:s3cret@db/ward' } });
    expect(loc.kind === 'postgres' && loc.config.display).toBe('postgresql://ward:***@db/ward');
  });

  it('reads a one-line password file (trailing newline dropped) and refuses an empty one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ward-pw-'));
    writeFileSync(join(dir, 'pw'), 'hunter2\n');
    writeFileSync(join(dir, 'empty'), '\n');
    const loc = resolveStoreLocation({ flag: 'postgres://ward@db/ward', passwordFile: join(dir, 'pw'), env: {} });
    expect(loc.kind === 'postgres' && loc.config.password).toBe('hunter2');
    expect(() => resolveStoreLocation({ flag: 'postgres://ward@db/ward', passwordFile: join(dir, 'empty'), env: {} })).toThrow(/exactly one non-empty line/);
    expect(() => resolveStoreLocation({ flag: 'postgres://ward@db/ward', env: { WARD_STORE_PASSWORD_FILE: join(dir, 'none') } })).toThrow(/read store password file/);
  });

  it('refuses a location that is not a postgres URL', () => {
    expect(() => resolveStoreLocation({ flag: 'mysql://x', env: {} })).toThrow(/not a postgres:\/\/ URL/);
  });

  it('redacts only the password', () => {
    expect(redact('postgres://u:p@h:1/d')).toBe('postgres://u:***@h:1/d');
    expect(redact('postgres://u@h:1/d')).toBe('postgres://u@h:1/d');
  });
});
