// The approver's Ed25519 key, held by this browser only.
//
// The private key is a WebCrypto CryptoKey created or imported as non-extractable: script on this
// page can ask it to sign, but nothing (not this code, not a later page) can read its bytes back.
// It is kept in this origin's IndexedDB (a CryptoKey survives structured cloning with its
// non-extractable flag) so that a reload does not lose it, and it is never sent anywhere: the
// daemon only ever receives signatures and the public half.

const ALG = { name: 'Ed25519' };
const DB = 'ward-console';
const STORE = 'keys';
const SLOT = 'approver';

/** PKCS#8 wrapping of a 32-byte Ed25519 seed (RFC 8410): this prefix, then the seed. */
const PKCS8_PREFIX = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];

export class KeyError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

function openDb() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function withStore(mode, fn) {
  const db = await openDb();
  try {
    return await new Promise((resolve, reject) => {
      const tx = db.transaction(STORE, mode);
      const req = fn(tx.objectStore(STORE));
      tx.oncomplete = () => resolve(req.result);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error);
    });
  } finally {
    db.close();
  }
}

export const b64 = {
  encode(bytes) {
    let s = '';
    for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
    return btoa(s);
  },
  decode(text) {
    const s = atob(text);
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  },
  url(bytes) {
    return b64.encode(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  },
  fromUrl(text) {
    const s = text.replace(/-/g, '+').replace(/_/g, '/');
    return b64.decode(s + '='.repeat((4 - (s.length % 4)) % 4));
  },
};

export function hexToBytes(hex) {
  if (!/^([0-9a-f]{2})+$/.test(hex)) throw new KeyError('bad_digest', 'the digest to sign is not lowercase hex');
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function hex(bytes) {
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** What the approvers list needs: the public JWK as `ward keys jwks` prints it (kid, key_id). */
async function describePublic(x) {
  const raw = b64.fromUrl(x);
  if (raw.length !== 32) throw new KeyError('bad_key', 'not an Ed25519 public key');
  const keyId = hex(await crypto.subtle.digest('SHA-256', raw));
  // RFC 7638 thumbprint: the required OKP members in lexicographic order, no whitespace.
  const kid = b64.url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`)));
  return { jwk: { kty: 'OKP', crv: 'Ed25519', x, kid, alg: 'EdDSA', use: 'sig', key_id: keyId }, keyId };
}

async function save(record) {
  await withStore('readwrite', (s) => s.put(record, SLOT));
  return record;
}

/** The stored approver key, or undefined. */
export async function loadKey() {
  try {
    return (await withStore('readonly', (s) => s.get(SLOT))) ?? undefined;
  } catch {
    return undefined; // no IndexedDB (private window): the key then lives in memory only
  }
}

export async function forgetKey() {
  await withStore('readwrite', (s) => s.delete(SLOT));
}

async function keep(privateKey, x, source, approver) {
  const { jwk, keyId } = await describePublic(x);
  const record = { privateKey, publicJwk: jwk, keyId, source, approver, createdAt: new Date().toISOString() };
  try {
    return await save(record);
  } catch {
    return record;
  }
}

/** Create a key in this browser. Its private half cannot be exported: register its public half. */
export async function generateKey(approver) {
  if (!crypto.subtle) throw new KeyError('no_webcrypto', 'WebCrypto is not available (the console needs a secure context: loopback or HTTPS)');
  let pair;
  try {
    pair = await crypto.subtle.generateKey(ALG, false, ['sign', 'verify']);
  } catch {
    throw new KeyError('no_ed25519', 'this browser has no Ed25519 in WebCrypto');
  }
  const pub = await crypto.subtle.exportKey('jwk', pair.publicKey);
  return keep(pair.privateKey, pub.x, 'created in this browser', approver);
}

function pkcs8FromSeed(seed) {
  const out = new Uint8Array(PKCS8_PREFIX.length + 32);
  out.set(PKCS8_PREFIX);
  out.set(seed, PKCS8_PREFIX.length);
  return out;
}

function isText(bytes) {
  return bytes.every((b) => b === 9 || b === 10 || b === 13 || (b >= 32 && b < 127));
}

/**
 * The private key in a file: an Ed25519 private JWK (with `d`), a PKCS#8 key (PEM or DER), or the
 * key file `ward keys init` writes (base64 of seed ‖ public key, 64 bytes). Returns the PKCS#8 DER
 * or the JWK, and the public key when the file states it (checked against the private key below).
 */
function parseKeyFile(bytes) {
  if (isText(bytes)) {
    const text = new TextDecoder().decode(bytes).trim();
    if (text.startsWith('{')) {
      let jwk;
      try {
        jwk = JSON.parse(text);
      } catch {
        throw new KeyError('bad_key', 'the file is not valid JSON');
      }
      if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.d !== 'string') throw new KeyError('bad_key', 'the JWK is not an Ed25519 private key (kty OKP, crv Ed25519, with d)');
      return { seed: b64.fromUrl(jwk.d), x: typeof jwk.x === 'string' ? jwk.x : undefined };
    }
    const pem = /-----BEGIN PRIVATE KEY-----([\s\S]+?)-----END PRIVATE KEY-----/.exec(text);
    if (pem) return { der: b64.decode(pem[1].replace(/\s+/g, '')) };
    if (/^[A-Za-z0-9+/]+={0,2}$/.test(text)) {
      const raw = b64.decode(text);
      if (raw.length === 64) return { seed: raw.slice(0, 32), x: b64.url(raw.slice(32)) };
      if (raw.length === 48) return { der: raw };
    }
    throw new KeyError('bad_key', 'not a key file: expected a private JWK, a PKCS#8 PEM or DER file, or a ward key file');
  }
  return { der: bytes };
}

/** Import the approver's private key from a file the user picked. The bytes are dropped afterwards. */
export async function importKeyFile(bytes, fileName, approver) {
  const parsed = parseKeyFile(new Uint8Array(bytes));
  if (parsed.seed && parsed.seed.length !== 32) throw new KeyError('bad_key', 'an Ed25519 private key is 32 bytes');
  const der = parsed.der ?? pkcs8FromSeed(parsed.seed);
  // Import once as extractable only to learn the public half (PKCS#8 files usually omit it), then
  // import again as non-extractable: the stored key can sign but never be read back.
  let x;
  let d;
  try {
    const probe = await crypto.subtle.importKey('pkcs8', der, ALG, true, ['sign']);
    ({ x, d } = await crypto.subtle.exportKey('jwk', probe));
  } catch {
    throw new KeyError('bad_key', 'not an Ed25519 private key');
  }
  if (parsed.x !== undefined && parsed.x !== x) throw new KeyError('bad_key', 'the file\'s public key does not match its private key');
  const privateKey = await crypto.subtle.importKey('jwk', { kty: 'OKP', crv: 'Ed25519', d, x }, ALG, false, ['sign']);
  return keep(privateKey, x, `imported from ${fileName}`, approver);
}

export async function setApprover(record, approver) {
  const next = { ...record, approver };
  try {
    return await save(next);
  } catch {
    return next;
  }
}

/**
 * Sign a digest the way Ward signs tokens: Ed25519 over the 32 raw digest bytes (not the hex
 * text). Returns the token's `signature` member.
 */
export async function signDigest(record, signedDigestHex) {
  const digest = hexToBytes(signedDigestHex);
  if (digest.length !== 32) throw new KeyError('bad_digest', 'the digest to sign is not a sha256 digest');
  const sig = await crypto.subtle.sign(ALG, record.privateKey, digest);
  return { alg: 'ed25519', key_id: record.keyId, sig: b64.encode(sig), signed_digest: signedDigestHex };
}
