import { describe, expect, it } from 'vitest';
import { digestJcs, jcs } from '../../src/canon/index.js';
import {
  bindContextEvidence,
  normalizeContextEnvelope,
  parseContextEnvelope,
  type ContextEnvelope,
} from '../../src/context/index.js';
import { ERROR_CODES, WardError } from '../../src/errors.js';
import { fixture, makeIntent, simpleIntentPayload, t, v1Intent } from './helpers.js';

// gate.md §11 V1 and V7.
const V1_CANONICAL =
  '{"arg_provenance":[{"arg_path":"$.path","source":"user"}],"args":{"path":"/tmp/approve-valid.txt"},"context":{"identity":"agent.scenario","phase":"apply","risk_class":"high","session_id":"sess-tier11","workspace":"/repo/gait"},"targets":[{"discovery_method":"unknown","endpoint_class":"fs.write","kind":"path","operation":"write","value":"/tmp/approve-valid.txt"}],"tool_name":"tool.write"}';
const V1_DIGEST = '4b53bb79e35105ac9170963ac6f84ed0ed15530c68f06a46fc1233c5ec766913';
const V7_PREPARED_CANONICAL =
  '{"arg_provenance":[{"arg_path":"$.path","source":"user"}],"args":{"path":"/tmp/approve-valid.txt"},"context":{"auth_context":{"context_age_seconds":3659},"context_evidence_mode":"required","context_refs":["ctx-a","ctx-b"],"context_set_digest":"793f36e5bd721ca7a293f211a10b3cb51f789445429848aaa16e0414eab8128f","identity":"agent.scenario","phase":"apply","risk_class":"high","session_id":"sess-tier11","workspace":"/repo/gait"},"targets":[{"discovery_method":"unknown","endpoint_class":"fs.write","kind":"path","operation":"write","value":"/tmp/approve-valid.txt"}],"tool_name":"tool.write"}';
const V7_PREPARED_DIGEST = '5a851409b8a555437e75559fdae924b969b53b3e9d5dce1806ac4e005ebd8d2b';
const V7_DIGEST = '793f36e5bd721ca7a293f211a10b3cb51f789445429848aaa16e0414eab8128f';
const NOON = t('2026-03-12T12:00:00Z');

function v7Envelope(): ContextEnvelope {
  return parseContextEnvelope(fixture('envelopes/v7-envelope.json'));
}

function bindingError(fn: () => unknown): WardError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(WardError);
    expect((err as WardError).code).toBe(ERROR_CODES.ENVELOPE_BINDING);
    return err as WardError;
  }
  throw new Error('expected a binding error');
}

describe('bindContextEvidence with a verified envelope (gate.md §4.5)', () => {
  it('produces the V7 prepared intent byte for byte, with intent_digest 5a851409…', () => {
    const bound = bindContextEvidence(v1Intent(), v7Envelope(), NOON);
    expect(bound.contextSource).toBe('context_envelope');
    expect(jcs(simpleIntentPayload(bound.intent))).toBe(V7_PREPARED_CANONICAL);
    expect(digestJcs(simpleIntentPayload(bound.intent))).toBe(V7_PREPARED_DIGEST);
  });

  it('makes the prepared digest depend on evaluation time through the derived age (d168ad1b… at 13:00)', () => {
    const bound = bindContextEvidence(v1Intent(), v7Envelope(), t('2026-03-12T13:00:00Z'));
    expect(bound.intent.context.auth_context).toEqual({ context_age_seconds: 7259 });
    expect(digestJcs(simpleIntentPayload(bound.intent)).slice(0, 8)).toBe('d168ad1b');
  });

  it('accepts claims that agree with the envelope, compared case-insensitively', () => {
    const intent = v1Intent({ context_set_digest: V7_DIGEST.toUpperCase(), context_evidence_mode: 'REQUIRED' });
    const bound = bindContextEvidence(intent, v7Envelope(), NOON);
    expect(bound.intent.context.context_set_digest).toBe(V7_DIGEST);
    expect(bound.intent.context.context_evidence_mode).toBe('required');
  });

  it('rejects a conflicting digest claim with the contract message', () => {
    const intent = v1Intent({ context_set_digest: 'c'.repeat(64) });
    expect(bindingError(() => bindContextEvidence(intent, v7Envelope(), NOON)).message).toBe(
      'context envelope digest does not match context.context_set_digest',
    );
  });

  it('rejects a conflicting evidence-mode claim with the contract message', () => {
    const intent = v1Intent({ context_evidence_mode: 'best_effort' });
    expect(bindingError(() => bindContextEvidence(intent, v7Envelope(), NOON)).message).toBe(
      'context envelope evidence mode does not match context.context_evidence_mode',
    );
  });

  it('checks the digest claim before the mode claim', () => {
    const intent = v1Intent({ context_set_digest: 'c'.repeat(64), context_evidence_mode: 'best_effort' });
    expect(bindingError(() => bindContextEvidence(intent, v7Envelope(), NOON)).message).toBe(
      'context envelope digest does not match context.context_set_digest',
    );
  });

  it('replaces claimed refs and a claimed age with values derived from the envelope', () => {
    const intent = v1Intent({
      context_refs: ['claimed'],
      auth_context: { context_age_seconds: 1, tenant: 't1', 'wrkr.tool_name': 'tool.write' },
    });
    const bound = bindContextEvidence(intent, v7Envelope(), NOON);
    expect(bound.intent.context.context_refs).toEqual(['ctx-a', 'ctx-b']);
    expect(bound.intent.context.auth_context).toEqual({
      context_age_seconds: 3659,
      tenant: 't1',
      'wrkr.tool_name': 'tool.write',
    });
  });

  it('derives sorted, deduplicated refs from records that share a ref_id', () => {
    const base = { source_type: 'doc', query_digest: 'a'.repeat(64), content_digest: 'b'.repeat(64), redaction_mode: 'hashes' };
    const env = parseContextEnvelope(
      JSON.stringify({
        context_set_id: 'set',
        records: [
          { ...base, ref_id: 'r2', source_locator: 'x', retrieved_at: '2026-03-12T11:59:00Z' },
          { ...base, ref_id: 'r1', source_locator: 'y', retrieved_at: '2026-03-12T11:59:00Z' },
          { ...base, ref_id: 'r2', source_locator: 'z', retrieved_at: '2026-03-12T11:59:00Z' },
        ],
      }),
    );
    const bound = bindContextEvidence(v1Intent(), env, NOON);
    expect(bound.intent.context.context_refs).toEqual(['r1', 'r2']);
    expect(bound.intent.context.context_evidence_mode).toBe('best_effort');
    expect(bound.intent.context.auth_context).toEqual({ context_age_seconds: 60 });
  });

  it('re-verifies an envelope that did not come from the parser and refuses a tampered one', () => {
    const parsed = v7Envelope();
    const handMade: ContextEnvelope = { ...parsed, records: [...parsed.records] };
    expect(bindContextEvidence(v1Intent(), handMade, NOON).intent.context.context_set_digest).toBe(V7_DIGEST);

    const tampered: ContextEnvelope = { ...parsed, records: [{ ...parsed.records[0]!, content_digest: 'f'.repeat(64) }] };
    expect(bindingError(() => bindContextEvidence(v1Intent(), tampered, NOON)).message).toBe(
      'verify context envelope: context_set_digest mismatch',
    );
    const invalid = { ...parsed, evidence_mode: 'strict' } as unknown as ContextEnvelope;
    expect(bindingError(() => bindContextEvidence(v1Intent(), invalid, NOON)).message).toBe(
      'verify context envelope: context evidence mode must be best_effort or required',
    );
  });

  it('binds an envelope built by normalizeContextEnvelope without re-normalizing it', () => {
    const env = normalizeContextEnvelope({ context_set_id: 'set', created_at: t('2026-03-12T11:00:00Z') });
    const bound = bindContextEvidence(v1Intent(), env, NOON);
    expect(bound.intent.context.context_refs).toEqual([]);
    expect(bound.intent.context.auth_context).toEqual({ context_age_seconds: 3600 });
  });
});

describe('bindContextEvidence without an envelope: claims are stripped', () => {
  it('turns the claimed V1 intent into the plain V1 intent (intent_digest 4b53bb79…)', () => {
    const claimed = v1Intent({
      context_set_digest: V7_DIGEST,
      context_evidence_mode: 'required',
      context_refs: ['ctx-a', 'ctx-b'],
      auth_context: { context_age_seconds: 1 },
    });
    const bound = bindContextEvidence(claimed, undefined, NOON);
    expect(bound.contextSource).toBe('');
    expect(jcs(simpleIntentPayload(bound.intent))).toBe(V1_CANONICAL);
    expect(digestJcs(simpleIntentPayload(bound.intent))).toBe(V1_DIGEST);
    expect(bound.intent.context.context_set_digest).toBe('');
    expect(bound.intent.context.context_evidence_mode).toBe('');
    expect(bound.intent.context.context_refs).toEqual([]);
    expect(bound.intent.context.auth_context).toBeUndefined();
  });

  it('keeps every other auth_context key, including wrkr.* claims', () => {
    const claimed = v1Intent({ auth_context: { context_age_seconds: 1, tenant: 't1', 'wrkr.data_class': 'public' } });
    const bound = bindContextEvidence(claimed, undefined, NOON);
    expect(bound.intent.context.auth_context).toEqual({ tenant: 't1', 'wrkr.data_class': 'public' });
  });

  it('reuses an auth_context that carries no age claim', () => {
    const auth = { tenant: 't1' };
    const bound = bindContextEvidence(v1Intent({ auth_context: auth }), undefined, NOON);
    expect(bound.intent.context.auth_context).toBe(auth);
  });
});

describe('bindContextEvidence never mutates its input', () => {
  it('leaves the input intent and its auth_context untouched and shares unchanged parts', () => {
    const intent = v1Intent({
      context_set_digest: V7_DIGEST,
      context_evidence_mode: 'required',
      context_refs: ['x'],
      auth_context: { context_age_seconds: 1, tenant: 't1' },
    });
    const before = structuredClone(intent);
    for (const envelope of [undefined, v7Envelope()]) {
      const bound = bindContextEvidence(intent, envelope, NOON);
      expect(intent).toEqual(before);
      expect(bound.intent).not.toBe(intent);
      expect(bound.intent.context).not.toBe(intent.context);
      expect(bound.intent.targets).toBe(intent.targets);
      expect(bound.intent.args).toBe(intent.args);
    }
  });

  it('returns a copy even when there is nothing to strip', () => {
    const intent = makeIntent();
    const bound = bindContextEvidence(intent, undefined, NOON);
    expect(bound.intent).not.toBe(intent);
    expect(bound.intent).toEqual(intent);
  });
});
