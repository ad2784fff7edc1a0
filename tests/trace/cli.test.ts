import { copyFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, tempDir, ward } from '../cli/run.js';
import { V7_TRACE_TEXT } from './fixtures.js';

const V7_PUBLIC = join(REPO, 'keys', 'v7_public.key');

function withV7(): string {
  const cwd = tempDir();
  writeFileSync(join(cwd, 'v7.json'), V7_TRACE_TEXT);
  return cwd;
}

describe('ward trace verify', () => {
  it('verifies the V7 reference trace with its public key (exit 0) in the reference output shape', () => {
    const cwd = withV7();
    const r = ward(['trace', 'verify', 'v7.json', '--public-key', V7_PUBLIC, '--json'], { cwd });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      ok: true,
      signature_status: 'verified',
      trace_id: '98c069640be42974e73b8b6b',
      verdict: 'block',
      key_id: '65b60673d6ed884bf01c2c222d82ada0740f29ac3355d6a925c81f17f47a27b8',
    });
  });

  it('fails (exit 6) rather than skipping when no key is configured anywhere', () => {
    const r = ward(['trace', 'verify', 'v7.json', '--json'], { cwd: withV7() });
    expect(r.code).toBe(6);
    expect(JSON.parse(r.stdout).error).toMatch(/^public key not configured/);
  });

  it('fails (exit 2) with the key of another signer, and reads stdin with -', () => {
    const cwd = withV7();
    expect(ward(['keys', 'init'], { cwd }).code).toBe(0);
    expect(ward(['trace', 'verify', 'v7.json'], { cwd }).code).toBe(2);
    expect(ward(['trace', 'verify', '-', '--public-key', V7_PUBLIC], { cwd, input: V7_TRACE_TEXT }).code).toBe(0);
  });

  it('reports every file of a directory and a summary; one tampered file fails the run', () => {
    const cwd = withV7();
    mkdirSync(join(cwd, 'traces'));
    copyFileSync(join(cwd, 'v7.json'), join(cwd, 'traces', 'trace_a.json'));
    writeFileSync(join(cwd, 'traces', 'trace_b.json'), V7_TRACE_TEXT.replace('"context_ref_count":2', '"context_ref_count":3'));
    writeFileSync(join(cwd, 'traces', 'notes.txt'), 'ignored');
    const r = ward(['trace', 'verify', 'traces', '--public-key', V7_PUBLIC, '--json'], { cwd });
    expect(r.code).toBe(2);
    const out = JSON.parse(r.stdout);
    expect(out.summary).toEqual({ total: 2, verified: 1, failed: 1 });
    expect(out.results[1]).toMatchObject({ ok: false, error: 'signed_digest mismatch', signature_status: 'failed' });
    const text = ward(['trace', 'verify', 'traces', '--public-key', V7_PUBLIC], { cwd });
    expect(text.stdout).toContain('1/2 verified, 1 failed');
  });

  it('verifies every trace gate eval wrote with the default key ring', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'p.yaml'), 'default_verdict: block\n');
    writeFileSync(
      join(cwd, 'i.json'),
      JSON.stringify({ tool_name: 'tool.read', args: {}, targets: [], context: { identity: 'a', workspace: '/w', risk_class: 'low' } }),
    );
    expect(ward(['gate', 'eval', '--policy', 'p.yaml', '--intent', 'i.json'], { cwd }).code).toBe(3);
    expect(ward(['trace', 'verify', '.ward/traces'], { cwd }).code).toBe(0);
  });
});

describe('ward trace export', () => {
  it('wraps a verified trace as JWS and DSSE that trace verify accepts', () => {
    const cwd = withV7();
    for (const format of ['jws', 'dsse']) {
      const out = `v7.${format === 'jws' ? 'jws' : 'dsse.json'}`;
      expect(ward(['trace', 'export', 'v7.json', '--format', format, '--out', out, '--public-key', V7_PUBLIC], { cwd }).code).toBe(0);
      expect(statSync(join(cwd, out)).mode & 0o777).toBe(0o600);
      // The wrapper is signed by the state key, the inner trace by the V7 key: both must verify.
      writeFileSync(join(cwd, 'jwks.json'), jwksWith(ward(['keys', 'jwks'], { cwd }).stdout, V7_PUBLIC));
      const r = ward(['trace', 'verify', out, '--jwks', 'jwks.json', '--json'], { cwd });
      expect(r.code, r.stdout).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, format, trace_id: '98c069640be42974e73b8b6b' });
    }
  });

  it('--jws-alg Ed25519 writes the fully specified alg, and trace verify accepts it', () => {
    const cwd = withV7();
    expect(ward(['trace', 'export', 'v7.json', '--format', 'jws', '--jws-alg', 'Ed25519', '--out', 'v7.jws', '--public-key', V7_PUBLIC], { cwd }).code).toBe(0);
    const header = JSON.parse(Buffer.from(readFileSync(join(cwd, 'v7.jws'), 'utf8').split('.')[0]!, 'base64url').toString('utf8')) as { alg: string };
    expect(header.alg).toBe('Ed25519');
    writeFileSync(join(cwd, 'jwks.json'), jwksWith(ward(['keys', 'jwks'], { cwd }).stdout, V7_PUBLIC));
    expect(ward(['trace', 'verify', 'v7.jws', '--jwks', 'jwks.json'], { cwd }).code).toBe(0);
  });

  it('refuses to export a trace that does not verify', () => {
    const cwd = withV7();
    writeFileSync(join(cwd, 'bad.json'), V7_TRACE_TEXT.replace('"verdict":"block"', '"verdict":"allow"'));
    const r = ward(['trace', 'export', 'bad.json', '--format', 'jws', '--public-key', V7_PUBLIC], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('trace does not verify, not exporting: signed_digest mismatch');
  });
});

/** A JWKS holding the given JWKS's keys plus a reference base64 public key file. */
function jwksWith(jwksText: string, publicKeyPath: string): string {
  const jwks = JSON.parse(jwksText) as { keys: unknown[] };
  const raw = Buffer.from(readFileSync(publicKeyPath, 'utf8').trim(), 'base64');
  jwks.keys.push({ kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') });
  return JSON.stringify(jwks);
}
