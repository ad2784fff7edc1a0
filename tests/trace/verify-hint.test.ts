import { describe, expect, it } from 'vitest';
import { fixture, tempDir, ward } from '../cli/run.js';

describe('ward trace verify with the wrong key', () => {
  it("names the signer's key and how to pass it", () => {
    const signer = tempDir();
    expect(ward(['gate', 'eval', '--policy', fixture('policies/default-allow.yaml'), '--intent', fixture('intents/v1-approval-valid.json')], { cwd: signer }).code).toBe(0);
    const other = tempDir();
    expect(ward(['keys', 'init'], { cwd: other }).code).toBe(0);
    const r = ward(['trace', 'verify', `${signer}/.ward/traces`], { cwd: other });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^hint: signed by key [0-9a-f]{64}; this verify used [0-9a-f]{64}\. .*--public-key/m);
    const right = ward(['trace', 'verify', `${signer}/.ward/traces`, '--state-dir', `${signer}/.ward`], { cwd: other });
    expect(right.code).toBe(0);
    expect(right.stderr).toBe('');
  });
});
