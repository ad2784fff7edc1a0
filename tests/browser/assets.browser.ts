import { createHash, generateKeyPairSync, verify, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../cli/run.js';
import { startDaemon, workdir, type DaemonChild } from '../daemon/helpers.js';
import { launch, pageProblems, type Browser } from './harness.js';

let daemon: DaemonChild;
let browser: Browser;

beforeAll(async () => {
  const w = workdir();
  daemon = await startDaemon(['--policy', w.policy, '--state-dir', w.state], { cwd: w.dir });
  browser = await launch();
});

afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
});

describe('console pages', () => {
  it.each(['/ui', '/ui/console', '/ui/policy', '/ui/decision?id=x'])('%s loads under the strict CSP, with nothing inline and nothing from elsewhere', async (path) => {
    const page = await browser.context.newPage();
    const res = await page.goto(daemon.url + path);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.waitForLoadState('networkidle').catch(() => undefined);
    const problems = await pageProblems(page);
    expect(problems.csp).toEqual([]);
    expect(problems.errors).toEqual([]);
    expect(browser.requests.filter((u) => !u.startsWith(daemon.url))).toEqual([]);
    await page.close();
  });

  it('creates a non-extractable Ed25519 approver key in the browser and shows its public JWK', async () => {
    const page = await browser.context.newPage();
    await page.goto(daemon.url + '/ui');
    await page.fill('#approver-name', 'alice');
    await page.click('#key-create');
    await page.waitForSelector('#key-some:not([hidden])');
    const jwk = JSON.parse((await page.textContent('#key-jwk')) ?? '{}') as Record<string, string>;
    expect(jwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', ward_approver: 'alice' });
    expect(jwk['d']).toBeUndefined();
    expect(jwk['key_id']).toMatch(/^[0-9a-f]{64}$/);
    // A string, not a function: vitest would rewrite `import()` inside a function it transforms.
    const extractable = await page.evaluate(`import('/ui/keys.js').then(async (m) => (await m.loadKey()).privateKey.extractable)`);
    expect(extractable).toBe(false);
    // Kept across a reload (IndexedDB), still without its private half on the page.
    await page.reload();
    await page.waitForSelector('#key-some:not([hidden])');
    expect(await page.textContent('#key-id')).toBe(jwk['key_id']);
    await page.close();
  });

  const keyFiles: [string, (k: KeyObject, pub: Buffer) => string][] = [
    ['a `ward keys init` key file', (k, pub) => Buffer.concat([k.export({ format: 'der', type: 'pkcs8' }).subarray(-32), pub]).toString('base64') + '\n'],
    ['a PKCS#8 PEM file', (k) => String(k.export({ format: 'pem', type: 'pkcs8' }))],
    ['a private JWK', (k) => JSON.stringify(k.export({ format: 'jwk' }))],
  ];
  it.each(keyFiles)('imports %s and signs a digest the way Ward verifies it (raw digest bytes)', async (_name, render) => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const pub = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
    const file = join(tempDir('ward-key-'), 'approver.key');
    writeFileSync(file, render(privateKey, pub), { mode: 0o600 });
    const page = await browser.context.newPage();
    await page.goto(daemon.url + '/ui');
    await page.waitForSelector('#live.on');
    if (await page.isVisible('#key-forget')) {
      page.once('dialog', (d) => void d.accept());
      await page.click('#key-forget');
    }
    await page.fill('#approver-name', 'bob');
    await page.setInputFiles('#key-file', file);
    await page.waitForSelector('#key-some:not([hidden])');
    const keyId = createHash('sha256').update(pub).digest('hex');
    expect(await page.textContent('#key-id')).toBe(keyId);
    const digest = createHash('sha256').update('a token').digest('hex');
    const sig = (await page.evaluate(`import('/ui/keys.js').then(async (m) => m.signDigest(await m.loadKey(), '${digest}'))`)) as Record<string, string>;
    expect(sig).toMatchObject({ alg: 'ed25519', key_id: keyId, signed_digest: digest });
    expect(verify(null, Buffer.from(digest, 'hex'), publicKey, Buffer.from(sig['sig']!, 'base64'))).toBe(true);
    await page.close();
  });

  it('refuses a file that is not an Ed25519 private key', async () => {
    const file = join(tempDir('ward-key-'), 'public.key');
    writeFileSync(file, generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('base64'));
    const page = await browser.context.newPage();
    await page.goto(daemon.url + '/ui');
    await page.waitForSelector('#live.on');
    if (await page.isVisible('#key-forget')) {
      page.once('dialog', (d) => void d.accept());
      await page.click('#key-forget');
    }
    await page.fill('#approver-name', 'bob');
    await page.setInputFiles('#key-file', file);
    await expect.poll(async () => page.textContent('#status')).toContain('not a key file');
    expect(await page.isVisible('#key-some')).toBe(false);
    await page.close();
  });
});
