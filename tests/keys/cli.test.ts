import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodePrivateKeyFile, generateSigningKey, parseJwks } from '../../src/keys/index.js';
import { tempDir, ward } from '../cli/run.js';

describe('ward keys', () => {
  it('init creates the key once; list, rotate and jwks show current and retired keys', () => {
    const cwd = tempDir();
    const first = JSON.parse(ward(['keys', 'init', '--json'], { cwd }).stdout);
    expect(first).toMatchObject({ ok: true, created: true });
    expect(JSON.parse(ward(['keys', 'init', '--json'], { cwd }).stdout)).toMatchObject({ created: false, key_id: first.key_id });
    const rotated = JSON.parse(ward(['keys', 'rotate', '--json'], { cwd }).stdout);
    expect(rotated.retired_key_id).toBe(first.key_id);
    const list = JSON.parse(ward(['keys', 'list', '--json'], { cwd }).stdout);
    expect(list.keys.map((k: { status: string; key_id: string }) => [k.status, k.key_id])).toEqual([
      ['current', rotated.key_id],
      ['retired', first.key_id],
    ]);
    const jwks = ward(['keys', 'jwks'], { cwd });
    expect(jwks.code).toBe(0);
    expect(parseJwks(jwks.stdout).map((k) => k.keyId)).toEqual([rotated.key_id, first.key_id]);
    expect(ward(['keys', 'verify'], { cwd }).code).toBe(0);
  });

  it('verify reports a mismatched pair with exit 2', () => {
    const cwd = tempDir();
    ward(['keys', 'init', '--out-dir', 'a', '--prefix', 'x'], { cwd });
    ward(['keys', 'init', '--out-dir', 'b', '--prefix', 'x'], { cwd });
    const r = ward(['keys', 'verify', '--private-key', 'a/x_private.key', '--public-key', 'b/x_public.key', '--json'], { cwd });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: 'public key does not match private key' });
    expect(ward(['keys', 'init', '--out-dir', 'a', '--prefix', 'x'], { cwd }).code).toBe(6);
  });

  it('refuses to sign with a world-readable private key', () => {
    const cwd = tempDir();
    const path = join(cwd, 'open.key');
    writeFileSync(path, encodePrivateKeyFile(generateSigningKey()));
    chmodSync(path, 0o644);
    const r = ward(['approve', '--intent-digest', 'a'.repeat(64), '--policy-digest', 'b'.repeat(64), '--ttl', '1h', '--scope', 'tool:x', '--approver', 'a', '--reason-code', 'r', '--private-key', 'open.key'], { cwd });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain(`chmod 600 ${path}`);
  });
});
