import { generateKeyPairSync, sign, createHash, createPrivateKey } from 'node:crypto';
import { performance } from 'node:perf_hooks';
const { privateKey } = generateKeyPairSync('ed25519');
const data = Buffer.alloc(32, 7);
function bench(name, f, n = 20000) { for (let i = 0; i < 2000; i++) f(); const t = performance.now(); for (let i = 0; i < n; i++) f(); console.log(name, ((performance.now() - t) / n * 1000).toFixed(1), 'µs'); }
bench('ed25519 sign 32B', () => sign(null, data, privateKey));
bench('ed25519 sign 900B', () => sign(null, Buffer.alloc(900, 1), privateKey));
bench('sha256 900B', () => createHash('sha256').update(Buffer.alloc(900, 1)).digest());
const obj = { a: 1, b: 'x'.repeat(100), c: [1, 2, 3], d: { e: 'f' } };
bench('JSON.stringify small', () => JSON.stringify(obj));
