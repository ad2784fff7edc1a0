import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint } from 'jose';
import { describe, expect, it } from 'vitest';
import { parseRFC3339 } from '../../src/canon/index.js';
import {
  buildJwks,
  DEV_KEY_WARNING,
  encodePrivateKeyFile,
  generateSigningKey,
  jwkThumbprint,
  loadKeyRing,
  loadOrCreateDefaultKey,
  loadVerifyKeys,
  parseJwks,
  parsePrivateKey,
  parsePublicKey,
  readPrivateKeyFile,
  resolveSigningKey,
  rotateDefaultKey,
} from '../../src/keys/index.js';
import { repoFile } from '../trace/fixtures.js';

const V7_KEY_ID = '65b60673d6ed884bf01c2c222d82ada0740f29ac3355d6a925c81f17f47a27b8';
const V7_PRIVATE = repoFile('fixtures/keys/v7_TEST_ONLY_private.key');

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'ward-keys-'));
}

describe('key parsing', () => {
  it('reads the reference base64 private and public key files (V7) with the reference key_id', () => {
    expect(parsePrivateKey(V7_PRIVATE).keyId).toBe(V7_KEY_ID);
    expect(parsePublicKey(repoFile('keys/v7_public.key')).keyId).toBe(V7_KEY_ID);
  });

  it('reads the V8 approval and delegation public keys with the key ids the spec gives', () => {
    expect(parsePublicKey(repoFile('keys/v8_approval_public.key')).keyId).toBe(
      '8393424682c702d59a923d26924b2d4827711e6c585117077766645e22efeb52',
    );
    expect(parsePublicKey(repoFile('keys/v8_delegation_public.key')).keyId).toBe(
      '854baff4855aef78ee7bff54778815baba4f4c8dd693e12ad4429edd118f6590',
    );
  });

  it('reads the same key from JWK and PEM (PKCS#8 / SPKI), autodetecting the format', () => {
    const key = parsePrivateKey(V7_PRIVATE);
    const privateJwk = JSON.stringify(key.privateKey.export({ format: 'jwk' }));
    const publicJwk = JSON.stringify(key.publicKey.export({ format: 'jwk' }));
    const privatePem = key.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const publicPem = key.publicKey.export({ format: 'pem', type: 'spki' }).toString();
    expect(parsePrivateKey(privateJwk).keyId).toBe(V7_KEY_ID);
    expect(parsePrivateKey(`\n${privatePem}\n`).keyId).toBe(V7_KEY_ID);
    expect(parsePublicKey(publicJwk).keyId).toBe(V7_KEY_ID);
    expect(parsePublicKey(publicPem).keyId).toBe(V7_KEY_ID);
  });

  it('rejects wrong lengths with the reference messages', () => {
    expect(() => parsePrivateKey(Buffer.alloc(32, 1).toString('base64'))).toThrow('invalid private key length: 32');
    expect(() => parsePublicKey(V7_PRIVATE)).toThrow('invalid public key length: 64');
  });

  it('rejects a private key whose public half does not belong to its seed', () => {
    const raw = Buffer.from(V7_PRIVATE.trim(), 'base64');
    raw[63] = raw[63]! ^ 1;
    expect(() => parsePrivateKey(raw.toString('base64'))).toThrow('public half does not match the seed');
  });

  it('refuses private material offered as a public key, non-Ed25519 JWKs and bad base64', () => {
    const key = parsePrivateKey(V7_PRIVATE);
    expect(() => parsePublicKey(JSON.stringify(key.privateKey.export({ format: 'jwk' })))).toThrow('holds a private key');
    expect(() => parsePublicKey(key.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString())).toThrow('SPKI');
    expect(() => parsePublicKey('{"kty":"EC","crv":"P-256","x":"a","y":"b"}')).toThrow('kty must be "OKP"');
    expect(() => parsePublicKey('not*base64')).toThrow('decode public key: illegal base64 data');
  });
});

describe('JWKS', () => {
  it('uses the RFC 7638 thumbprint as kid (equal to jose) and keeps the reference key_id', async () => {
    for (let i = 0; i < 5; i++) {
      const key = generateSigningKey();
      const [entry] = buildJwks([key]).keys;
      expect(entry!.kid).toBe(await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: entry!.x }, 'sha256'));
      expect(entry!.key_id).toBe(key.keyId);
      expect(jwkThumbprint(key)).toBe(entry!.kid);
    }
  });

  it('round-trips through parseJwks and rejects a key_id that does not match its key', () => {
    const keys = [generateSigningKey(), generateSigningKey()];
    const jwks = buildJwks(keys);
    expect(parseJwks(JSON.stringify(jwks)).map((k) => k.keyId)).toEqual(keys.map((k) => k.keyId));
    jwks.keys[0]!.key_id = keys[1]!.keyId;
    expect(() => parseJwks(JSON.stringify(jwks))).toThrow('key_id does not match its key');
    expect(() => parseJwks('{"keys":[]}')).toThrow('no Ed25519 keys');
  });
});

describe('key store', () => {
  it('creates the default key 0600 on first use and reuses it afterwards', () => {
    const state = tempDir();
    const first = loadOrCreateDefaultKey(state);
    expect(first.created).toBe(true);
    expect(statSync(first.paths.privateKey).mode & 0o777).toBe(0o600);
    expect(statSync(first.paths.publicKey).mode & 0o777).toBe(0o600);
    const second = loadOrCreateDefaultKey(state);
    expect(second.created).toBe(false);
    expect(second.key.keyId).toBe(first.key.keyId);
    expect(parsePublicKey(readFileSync(first.paths.publicKey, 'utf8')).keyId).toBe(first.key.keyId);
  });

  it('refuses a private key file that group or others can read, naming chmod 600', () => {
    const dir = tempDir();
    const path = join(dir, 'k.key');
    writeFileSync(path, encodePrivateKeyFile(generateSigningKey()));
    chmodSync(path, 0o644);
    expect(() => readPrivateKeyFile(path)).toThrow(`run: chmod 600 ${path}`);
    chmodSync(path, 0o640);
    expect(() => readPrivateKeyFile(path)).toThrow('accessible by group or others (mode 0640)');
    chmodSync(path, 0o600);
    expect(readPrivateKeyFile(path).keyId).toMatch(/^[0-9a-f]{64}$/);
  });

  it('keeps rotated-out public keys in the ring as verify-only', () => {
    const state = tempDir();
    const original = loadOrCreateDefaultKey(state).key;
    const rotated = rotateDefaultKey(state, parseRFC3339('2026-11-21T10:00:00Z'));
    expect(rotated.retired?.keyId).toBe(original.keyId);
    expect(rotated.key.keyId).not.toBe(original.keyId);
    const ring = loadKeyRing(state);
    expect(ring.map((k) => [k.status, k.keyId])).toEqual([
      ['current', rotated.key.keyId],
      ['retired', original.keyId],
    ]);
    expect(loadOrCreateDefaultKey(state).key.keyId).toBe(rotated.key.keyId);
  });

  it('has an empty ring when the state directory has no keys', () => {
    expect(loadKeyRing(tempDir())).toEqual([]);
  });
});

describe('resolveSigningKey', () => {
  const base = { env: {}, cwd: '/', stateDir: '' };

  it('default mode uses (and creates) the persistent key', () => {
    const state = tempDir();
    const a = resolveSigningKey({ ...base, mode: 'default', stateDir: state });
    const b = resolveSigningKey({ ...base, mode: 'default', stateDir: state });
    expect(a.created).toBe(true);
    expect(b.key.keyId).toBe(a.key.keyId);
    expect(a.warnings).toEqual([]);
  });

  it('default mode uses an explicit private key when given', () => {
    const dir = tempDir();
    const path = join(dir, 'p.key');
    writeFileSync(path, V7_PRIVATE, { mode: 0o600 });
    expect(resolveSigningKey({ ...base, mode: 'default', stateDir: tempDir(), privateKeyPath: path }).key.keyId).toBe(V7_KEY_ID);
  });

  it('dev mode is ephemeral with the reference warning and refuses explicit sources', () => {
    const a = resolveSigningKey({ ...base, mode: 'dev' });
    expect(a.warnings).toEqual([DEV_KEY_WARNING]);
    expect(resolveSigningKey({ ...base, mode: 'dev' }).key.keyId).not.toBe(a.key.keyId);
    expect(() => resolveSigningKey({ ...base, mode: 'dev', privateKeyEnv: 'K' })).toThrow('dev mode does not accept explicit key sources');
  });

  it('prod mode requires exactly one private source', () => {
    expect(() => resolveSigningKey({ ...base, mode: 'prod' })).toThrow('prod mode requires a private key source');
    expect(() => resolveSigningKey({ ...base, mode: 'prod', privateKeyPath: 'a', privateKeyEnv: 'B' })).toThrow(
      'private key source: set either path or env',
    );
    expect(() => resolveSigningKey({ ...base, mode: 'prod', privateKeyEnv: 'EMPTY', env: { EMPTY: ' ' } })).toThrow(
      'private key env not set: EMPTY',
    );
    expect(resolveSigningKey({ ...base, mode: 'prod', privateKeyEnv: 'K', env: { K: V7_PRIVATE } }).key.keyId).toBe(V7_KEY_ID);
  });
});

describe('loadVerifyKeys', () => {
  it('prefers a public source, else derives from a private source, else fails', () => {
    const other = generateSigningKey();
    const env = { PUB: other.publicRaw.toString('base64'), PRIV: V7_PRIVATE };
    expect(loadVerifyKeys({ publicKeyEnv: 'PUB', privateKeyEnv: 'PRIV' }, env, '/')[0]!.keyId).toBe(other.keyId);
    expect(loadVerifyKeys({ privateKeyEnv: 'PRIV' }, env, '/')[0]!.keyId).toBe(V7_KEY_ID);
    expect(() => loadVerifyKeys({}, env, '/')).toThrow('public key not configured');
  });

  it('reads every Ed25519 key of a JWKS file', () => {
    const dir = tempDir();
    const keys = [generateSigningKey(), generateSigningKey()];
    writeFileSync(join(dir, 'jwks.json'), JSON.stringify(buildJwks(keys)));
    expect(loadVerifyKeys({ jwksPath: 'jwks.json' }, {}, dir).map((k) => k.keyId)).toEqual(keys.map((k) => k.keyId));
  });
});
