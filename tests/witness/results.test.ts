import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parsePolicyYaml } from '../../src/policy/index.js';
import type { ResultsConfig } from '../../src/policy/types.js';
import { applyResultAction, inspectResult } from '../../src/witness/results.js';

function config(yaml: string): ResultsConfig {
  return parsePolicyYaml(yaml).policy.results;
}
const ALL = config(`results:
  credentials: { action: redact }
  invisible: { action: redact }
  pii: { action: redact, patterns: [{ name: us_ssn, regex: '\\b\\d{3}-\\d{2}-\\d{4}\\b' }] }
  oversize: { action: block, max_bytes: 4096 }
`);
const text = (t: string) => ({ content: [{ type: 'text', text: t }] });

// Test keys are assembled at run time so the repository holds no literal key a scanner would flag.
const AWS_ID = ['AKIA', 'IOSFODNN7EXAMPLE'].join('');
const AWS_SECRET = ['wJalrXUtnFEMI/K7MDENG/', 'bPxRfiCYEXAMPLEKEY'].join('');
const PEM = ['-----BEGIN RSA PRIVATE', ' KEY-----\nMIIEowIBAAKCAQEA7\nabc==\n-----END RSA PRIVATE', ' KEY-----'].join('');
const SAMPLES: [string, string][] = [
  ['aws_access_key_id', AWS_ID],
  ['pem_private_key', PEM],
  ['github_token', `ghp_${'a1B2c3D4e5'.repeat(3)}abcdef`],
  ['gitlab_token', `glpat-${'xY9_zW8-vU7t'.repeat(2)}`],
  ['slack_token', `xoxb-${'1234567890'}-${'AbCdEfGhIjKl'}`],
  ['stripe_key', `sk_live_${'4eC39HqLyjWDarjtT1zdp7dc'}`],
  ['openai_key', `sk-proj-${'Ab3dEf6hIj9lMn2pQr5tUv8xYz1bCd4fGh7jKl0n'.repeat(2)}`],
  ['jwt', `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.${'dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'}`],
  ['google_api_key', `AIza${'SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY'}`],
];

describe('inspectResult', () => {
  it.each(SAMPLES)('finds %s, and the finding holds no part of it', (kind, secret) => {
    const got = inspectResult(text(`here: ${secret} done`), ALL);
    expect(got.findings.map((f) => [f.detector, f.kind, f.path])).toEqual([['credentials', kind, '$.content[0].text']]);
    expect(JSON.stringify(got)).not.toContain(secret.slice(0, 12));
    expect(got.findings[0]?.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(got.action).toBe('redact');
  });

  it('finds an AWS secret key only next to its name, and flags just the secret', () => {
    const with_ = inspectResult(text(`aws_secret_access_key = ${AWS_SECRET}\n`), ALL);
    expect(with_.findings.map((f) => f.kind)).toEqual(['aws_secret_access_key']);
    const f = with_.findings[0]!;
    expect(`aws_secret_access_key = ${AWS_SECRET}\n`.slice(f.offset, f.offset + f.length)).toBe(AWS_SECRET);
    expect(inspectResult(text(`checksum ${AWS_SECRET}`), ALL).findings).toEqual([]);
  });

  it('finds credentials assigned to credential-like names, as the gate judges intent arguments', () => {
    const env = ['DB_HOST=db.internal', 'DB_PASSWORD=Xk9mQ2vL7pR4tW8z', 'API_KEY = "sk-short"', 'GITHUB_TOKEN=' + SAMPLES[2]![1], 'SESSION_TOKEN_ID=abc123def456ghi789', 'password: correct horse battery staple', 'api_key=env:PROD_KEY_2024_ABCDEF', 'token_url: https://oauth2.example.com/token', 'callback https://x.example/cb?access_token=Qw3rTy7uIoP9aSdF2g&x=1'].join('\n');
    const got = inspectResult({ content: [{ type: 'text', text: env }], structuredContent: { config: { apiKey: 'Zr8Yq3Lm5Np7Tx2Kd9', token_hash: 'abc123abc123abc123abc', name: 'x1y2z3x1y2z3x1y2z3' } } }, ALL);
    expect(got.findings.map((f) => `${f.path}:${f.kind}`)).toEqual([
      '$.content[0].text:github_token',
      '$.content[0].text:credential_assignment',
      '$.content[0].text:credential_assignment',
      '$.structuredContent.config.apiKey:credential_field',
    ]);
    const out = JSON.stringify(applyResultAction({ content: [{ type: 'text', text: env }] }, inspectResult({ content: [{ type: 'text', text: env }] }, ALL).findings, 'redact'));
    expect(out).toContain('DB_PASSWORD=[REDACTED:credentials:credential_assignment]');
    expect(out).toContain('DB_HOST=db.internal');
    expect(out).not.toContain('Xk9mQ2vL7pR4tW8z');
  });

  it('finds invisible characters and configured PII; keeps emoji sequences and Persian ZWNJ', () => {
    const got = inspectResult(
      { structuredContent: { a: 'ignore\u200Bthis', b: 'abc\u202Edcba', c: 'x\u{E0041}\u{E0042}y', d: 'bell\u0007', ssn: 'SSN 123-45-6789' } },
      ALL,
    );
    expect(got.findings.map((f) => `${f.path}:${f.detector}:${f.kind}`)).toEqual([
      '$.structuredContent.a:invisible:zero_width',
      '$.structuredContent.b:invisible:bidi_control',
      '$.structuredContent.c:invisible:tag_characters',
      '$.structuredContent.d:invisible:control_character',
      '$.structuredContent.ssn:pii:us_ssn',
    ]);
    const benign = inspectResult(text('family 👨\u200D👩\u200D👧 ok ❤\uFE0F tab\tnew\nline\r\n می\u200Cخواهم'), ALL);
    expect(benign.findings).toEqual([]);
  });

  it('flags oversize results and reports the size', () => {
    const got = inspectResult(text('x'.repeat(5000)), ALL);
    expect(got.findings.map((f) => f.detector)).toEqual(['oversize']);
    expect(got.action).toBe('block');
    expect(got.bytes).toBeGreaterThan(5000);
  });

  it('does nothing when the section is off, and keys digests with a digest key', () => {
    const off = config('default_verdict: allow\n');
    expect(inspectResult(text(AWS_ID), off)).toMatchObject({ findings: [], action: 'pass' });
    const keyed = inspectResult(text(AWS_ID), ALL, { digestKey: Buffer.from('k') });
    expect(keyed.findings[0]?.digest).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
  });

  it('takes the strictest action over detectors', () => {
    const cfg = config('results: {credentials: {action: block}, invisible: {action: pass}}\n');
    expect(inspectResult(text('a\u200Bb'), cfg).action).toBe('pass');
    expect(inspectResult(text(`a\u200Bb ${AWS_ID}`), cfg).action).toBe('block');
  });

  it('finds a key whose prefix (or, for an AWS key id, the whole key) is written in another case', () => {
    const recased: [string, string][] = [
      ['aws_access_key_id', AWS_ID.toLowerCase()],
      ['aws_access_key_id', `AkIa${AWS_ID.slice(4)}`],
      ['pem_private_key', PEM.toLowerCase()],
      ['github_token', `GHP_${'a1B2c3D4e5'.repeat(3)}abcdef`],
      ['stripe_key', `SK_LIVE_${'4eC39HqLyjWDarjtT1zdp7dc'}`],
      ['google_api_key', `aiza${'SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY'}`],
      ['slack_token', `XOXB-${'1234567890'}-${'AbCdEfGhIjKl'}`],
    ];
    for (const [kind, secret] of recased) {
      const got = inspectResult(text(`here: ${secret} done`), ALL);
      expect(got.findings.map((f) => [f.kind, f.offset, f.view]), secret).toEqual([[kind, 6, undefined]]);
      const out = JSON.stringify(applyResultAction(text(`here: ${secret} done`), got.findings, got.action));
      expect(out).toContain(`here: [REDACTED:credentials:${kind}] done`);
    }
    // Full width and lower case at once: the normalized view, case-folded.
    const wide = `key ${AWS_ID.toLowerCase().replace(/[!-~]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0))}`;
    expect(inspectResult(text(wide), ALL).findings.map((f) => [f.kind, f.view])).toEqual([['aws_access_key_id', 'normalized']]);
    // The exact spelling still wins its stretch: one finding, not two.
    expect(inspectResult(text(`x ${AWS_ID} y`), ALL).findings).toHaveLength(1);
  });

  it('case folding does not turn words into keys: a folded match needs a digit in its secret', () => {
    const words = [
      'aizawa_takeshi_profile_photo_archive_x of the album',
      'asianmarketsreports and akiakiakiakiakiakia',
      'The ASIA PACIFIC REGION SALES TEAM report',
      'see GHP_ (github prefix) and SK_LIVE_ docs and XOXB- docs',
      '-----BEGIN PUBLIC KEY-----\nabc\n-----end public key-----',
    ];
    for (const t of words) expect(inspectResult(text(t), ALL).findings, t).toEqual([]);
    fc.assert(
      fc.property(fc.lorem({ maxCount: 40 }), fc.constantFrom('toUpperCase', 'toLowerCase') as fc.Arbitrary<'toUpperCase' | 'toLowerCase'>, (words, f) => inspectResult(text(words[f]()), ALL).findings.length === 0),
      { numRuns: 200 },
    );
  });

  it('has no false positives on ordinary text, code and ids', () => {
    const ordinary = [
      'The quick brown fox jumps over the lazy dog. AKIA is an acronym.',
      'const sk_test = process.env.STRIPE; // sk_live_ prefix only',
      'commit 9fceb02d0ae598e95dc970b74767f19372d61af8 Author: eyJ <a@b.c>',
      'uuid 123e4567-e89b-12d3-a456-426614174000, sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
      '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----',
    ];
    for (const t of ordinary) expect(inspectResult(text(t), ALL).findings, t).toEqual([]);
    fc.assert(
      fc.property(fc.lorem({ maxCount: 40 }), (words) => inspectResult(text(words), ALL).findings.length === 0),
      { numRuns: 200 },
    );
  });
});

describe('applyResultAction', () => {
  it('redacts in place and keeps the MCP shape', () => {
    const result = {
      content: [{ type: 'text', text: `id ${AWS_ID} and key ${AWS_ID}!` }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }],
      structuredContent: { creds: { id: AWS_ID }, n: 3 },
      isError: false,
    };
    const got = inspectResult(result, ALL);
    const out = applyResultAction(result, got.findings, got.action) as typeof result;
    expect(out).toEqual({
      content: [
        { type: 'text', text: 'id [REDACTED:credentials:aws_access_key_id] and key [REDACTED:credentials:aws_access_key_id]!' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      ],
      structuredContent: { creds: { id: '[REDACTED:credentials:aws_access_key_id]' }, n: 3 },
      isError: false,
    });
    expect(result.structuredContent.creds.id).toBe(AWS_ID); // the input is not mutated
  });

  it('leaves pass findings in place while redacting others', () => {
    const cfg = config('results: {credentials: {action: redact}, invisible: {action: pass}}\n');
    const result = text(`a\u200Bb ${AWS_ID}`);
    const got = inspectResult(result, cfg);
    expect(applyResultAction(result, got.findings, got.action)).toEqual(text('a\u200Bb [REDACTED:credentials:aws_access_key_id]'));
  });

  it('blocks with an isError result that names the detector, never the secret', () => {
    const cfg = config('results: {credentials: {action: block}}\n');
    const result = text(PEM);
    const got = inspectResult(result, cfg);
    const out = applyResultAction(result, got.findings, got.action);
    expect(out).toEqual({
      content: [{ type: 'text', text: 'Ward blocked this tool result: the result firewall flagged credentials (pem_private_key).' }],
      isError: true,
    });
  });

  it('replaces an oversize result by a summary with its digest when redacting', () => {
    const cfg = config('results: {oversize: {action: redact, max_bytes: 100}}\n');
    const result = { ...text('y'.repeat(500)), structuredContent: { big: 'y'.repeat(500) } };
    const got = inspectResult(result, cfg);
    const out = applyResultAction(result, got.findings, got.action) as { content: { text: string }[] };
    expect(Object.keys(out)).toEqual(['content']);
    expect(out.content[0]?.text).toMatch(/^\[REDACTED:oversize\] Ward withheld this tool result: \d+ bytes, .*sha256:[0-9a-f]{64}$/);
  });

  it('pass returns the result untouched', () => {
    const result = text(AWS_ID);
    const got = inspectResult(result, config('results: {credentials: {action: pass}}\n'));
    expect(got.findings).toHaveLength(1);
    expect(applyResultAction(result, got.findings, got.action)).toBe(result);
  });

  it('keeps a __proto__ key of a parsed result as a key', () => {
    const result = JSON.parse(`{"structuredContent":{"__proto__":{"k":"${AWS_ID}"}}}`) as unknown;
    const got = inspectResult(result, ALL);
    const out = applyResultAction(result, got.findings, got.action);
    expect(JSON.stringify(out)).toBe('{"structuredContent":{"__proto__":{"k":"[REDACTED:credentials:aws_access_key_id]"}}}');
  });

  it('never lets a planted key through a redaction (property)', () => {
    const keyArb = fc.constantFrom(...SAMPLES.map(([, secret]) => secret));
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.lorem(), keyArb), { minLength: 1, maxLength: 8 }), keyArb, (parts, key) => {
        const text = [...parts, key].join(' ');
        const result = { content: [{ type: 'text', text }], structuredContent: { nested: [text] } };
        const got = inspectResult(result, ALL);
        const out = JSON.stringify(applyResultAction(result, got.findings, got.action));
        return SAMPLES.every(([, secret]) => !out.includes(secret));
      }),
      { numRuns: 200 },
    );
  });
});
