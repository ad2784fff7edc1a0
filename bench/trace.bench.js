// Trace signing and verification: the §6.2 construction (JCS + sha256 + Ed25519 over the digest)
// against raw node:crypto Ed25519 on the same 32 digest bytes, the floor no implementation can
// beat. Target: signing adds under 60 µs per decision.

import { sign, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { jcs, parsePrivateKey, verifyTraceRecord } from '../dist/index.js';
import { sha256Bytes } from '../dist/canon/index.js';
import { signDigestedJson, withoutSignature } from '../dist/trace/index.js';

const fixture = (path) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

export default async function traceBench(h) {
  // The V7 reference trace (2 KB on disk) and its key: the golden record, so the bench signs real data.
  const record = JSON.parse(fixture('fixtures/traces/v7-reference-trace.json'));
  const key = parsePrivateKey(fixture('fixtures/keys/v7_TEST_ONLY_private.key'));
  const unsigned = withoutSignature(record);
  const digest = sha256Bytes(jcs(unsigned));
  const rawSig = sign(null, digest, key.privateKey);
  if (signDigestedJson(unsigned, key).sig !== record.signature.sig) throw new Error('bench: V7 signature mismatch');
  if (!verifyTraceRecord(record, [key]).ok) throw new Error('bench: V7 does not verify');

  await h.suite(
    'sign · one trace record (V7)',
    [
      ['crypto.sign(ed25519, 32-byte digest) [floor]', () => sign(null, digest, key.privateKey)],
      ['ward signDigestedJson (JCS + sha256 + sign)', () => signDigestedJson(unsigned, key)],
    ],
    { baseline: 'crypto.sign(ed25519, 32-byte digest) [floor]' },
  );

  await h.suite(
    'verify · one trace record (V7)',
    [
      ['crypto.verify(ed25519, 32-byte digest) [floor]', () => verify(null, digest, key.publicKey, rawSig)],
      ['ward verifyTraceRecord (JCS + sha256 + checks + verify)', () => verifyTraceRecord(record, [key])],
    ],
    { baseline: 'crypto.verify(ed25519, 32-byte digest) [floor]' },
  );
}
