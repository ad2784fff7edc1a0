import { describe, expect, it } from 'vitest';
import {
  contextEnvelopeJson,
  contextSetDigest,
  isVerifiedContextEnvelope,
  parseContextEnvelope,
  transformEnvelopePrivacy,
  type ContextPrivacyMode,
} from '../../src/context/index.js';
import { ERROR_CODES, WardError } from '../../src/errors.js';
import { fixture } from './helpers.js';

const V7_DIGEST = '793f36e5bd721ca7a293f211a10b3cb51f789445429848aaa16e0414eab8128f';

function v7() {
  return parseContextEnvelope(fixture('envelopes/v7-envelope.json'));
}

describe('transformEnvelopePrivacy (gate.md §4.5)', () => {
  it('metadata mode redacts locators, zeroes both digests and recomputes context_set_digest', () => {
    const out = transformEnvelopePrivacy(v7(), 'metadata');
    for (const record of out.records) {
      expect(record.source_locator).toBe('redacted:metadata');
      expect(record.query_digest).toBe('0'.repeat(64));
      expect(record.content_digest).toBe('0'.repeat(64));
    }
    expect(out.context_set_digest).toBe(contextSetDigest(out.records));
    expect(out.context_set_digest).not.toBe(V7_DIGEST);
    expect(isVerifiedContextEnvelope(out)).toBe(true);
    // The transformed envelope verifies on its own when written out and read back.
    expect(parseContextEnvelope(JSON.stringify(contextEnvelopeJson(out))).context_set_digest).toBe(out.context_set_digest);
  });

  it('an empty mode means metadata', () => {
    expect(transformEnvelopePrivacy(v7(), '').context_set_digest).toBe(transformEnvelopePrivacy(v7(), 'metadata').context_set_digest);
  });

  it('hashes mode redacts locators but keeps the digests', () => {
    const source = v7();
    const out = transformEnvelopePrivacy(source, 'hashes');
    expect(out.records.map((r) => r.source_locator)).toEqual(['redacted:hashes', 'redacted:hashes']);
    expect(out.records.map((r) => r.content_digest)).toEqual(source.records.map((r) => r.content_digest));
    expect(out.context_set_digest).toBe(contextSetDigest(out.records));
    expect(out.context_set_digest).not.toBe(V7_DIGEST);
  });

  it('raw mode keeps everything, so the digest is unchanged', () => {
    const out = transformEnvelopePrivacy(v7(), 'raw');
    expect(contextEnvelopeJson(out)).toEqual(contextEnvelopeJson(v7()));
    expect(out.context_set_digest).toBe(V7_DIGEST);
  });

  it('keeps the envelope-level fields and does not touch its input', () => {
    const source = v7();
    const before = contextEnvelopeJson(source);
    const out = transformEnvelopePrivacy(source, 'metadata');
    expect(out.context_set_id).toBe('ctx-set-1');
    expect(out.evidence_mode).toBe('required');
    expect(contextEnvelopeJson(source)).toEqual(before);
  });

  it('rejects an unknown mode', () => {
    try {
      transformEnvelopePrivacy(v7(), 'full' as ContextPrivacyMode);
      throw new Error('expected an error');
    } catch (err) {
      expect(err).toBeInstanceOf(WardError);
      expect((err as WardError).code).toBe(ERROR_CODES.ENVELOPE_INVALID);
      expect((err as WardError).message).toBe('unsupported context privacy mode: full');
    }
  });
});
