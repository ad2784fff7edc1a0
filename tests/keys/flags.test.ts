import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodePrivateKeyFile, generateSigningKey } from '../../src/keys/index.js';
import { checkProfileKeyFlags, keyFlagOptions, keyModeFlag, signingKeyFromKeyFlags } from '../../src/keys/flags.js';
import { ERROR_CODES } from '../../src/errors.js';

describe('keys/flags: the one signing-key-from-flags mapping', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ward-keyflags-'));
  const key = generateSigningKey();
  writeFileSync(join(dir, 'signer.key'), encodePrivateKeyFile(key), { mode: 0o600 });
  const place = { cwd: dir, env: { SIGNER: encodePrivateKeyFile(key) }, stateDir: join(dir, 'state') };

  it('reads --key-mode trimmed and lowercased, default when empty, and refuses other modes', () => {
    expect([undefined, '', ' ', 'default', ' Dev ', 'PROD'].map(keyModeFlag)).toEqual(['default', 'default', 'default', 'default', 'dev', 'prod']);
    expect(() => keyModeFlag('staging')).toThrow(expect.objectContaining({ code: ERROR_CODES.USAGE, message: 'unsupported --key-mode staging' }));
  });

  it('reads a relative --private-key from the working directory, and --private-key-env from the environment', () => {
    expect(signingKeyFromKeyFlags({ keyMode: 'prod', privateKey: 'signer.key' }, place)).toMatchObject({ source: 'path', key: { keyId: key.keyId } });
    expect(signingKeyFromKeyFlags({ keyMode: 'prod', privateKeyEnv: 'SIGNER' }, place)).toMatchObject({ source: 'env', key: { keyId: key.keyId } });
    expect(signingKeyFromKeyFlags({}, place)).toMatchObject({ source: 'default' });
  });

  it('treats a key path that is empty after trimming as not given', () => {
    expect(keyFlagOptions({ privateKey: ' ' }, place)).toMatchObject({ mode: 'default', privateKeyPath: ' ' });
    expect(signingKeyFromKeyFlags({ privateKey: ' ' }, place)).toMatchObject({ source: 'default' });
    expect(() => signingKeyFromKeyFlags({ keyMode: 'prod', privateKey: ' ' }, place)).toThrow('prod mode requires a private key source');
  });

  it('states the oss-prod demand in the reference\'s two forms', () => {
    const gate = 'oss-prod profile requires --key-mode prod and --private-key or --private-key-env';
    expect(() => checkProfileKeyFlags('oss-prod', { keyMode: 'prod' }, 'gate')).toThrow(gate);
    expect(() => checkProfileKeyFlags('oss-prod', { keyMode: 'default', privateKey: 'k' }, 'gate')).toThrow(gate);
    expect(() => checkProfileKeyFlags('oss-prod', { keyMode: 'prod', privateKeyEnv: 'SIGNER' }, 'gate')).not.toThrow();
    expect(() => checkProfileKeyFlags('oss-prod', { keyMode: 'default' }, 'service')).toThrow(
      expect.objectContaining({ code: ERROR_CODES.POLICY_PROFILE, message: 'oss-prod profile requires --key-mode prod', hint: 'add --key-mode prod --private-key KEY (or --private-key-env VAR)' }),
    );
    expect(() => checkProfileKeyFlags('oss-prod', { keyMode: 'prod' }, 'service')).not.toThrow();
    expect(() => checkProfileKeyFlags('standard', {}, 'gate')).not.toThrow();
  });
});
