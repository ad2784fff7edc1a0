import { describe, expect, it } from 'vitest';
import { ZERO_TIME, parseRFC3339, type JsonObject, type JsonValue } from '../../src/canon/index.js';
import * as intentFields from '../../src/intent/fields.js';
import * as strictFields from '../../src/context/fields.js';
import { tokenFields } from '../../src/tokens/decode.js';
import { FieldReader } from '../../src/agent-hooks/tool-call.js';
import { decodeToolCall } from '../../src/decision-service/adapters.js';
import { normalizeIntent } from '../../src/intent/index.js';
import { parseContextEnvelope } from '../../src/context/envelope.js';
import { normalizeApprovalToken } from '../../src/tokens/index.js';
import { ERROR_CODES, WardError } from '../../src/errors.js';

/*
 * The one decoder (src/canon/decode.ts) through its four users: intents, strict documents such as
 * context envelopes, tokens and MCP tool-call payloads. Each input must get the same answer from
 * every user that has a field of that type; only the error's wording and code differ.
 */

type Kind = 'string' | 'bool' | 'int' | 'object' | 'objects' | 'strings' | 'time';
type Read = (obj: JsonObject, key: string) => unknown;

const ENVELOPE: strictFields.Decoder = { prefix: 'parse context envelope: ', root: 'Envelope', code: ERROR_CODES.ENVELOPE_INVALID };
const token = tokenFields('approval token');
const payload = new FieldReader('mcp');

const USERS: Record<string, Partial<Record<Kind, Read>>> = {
  intent: {
    string: (o, k) => intentFields.readString(o, k, ''),
    bool: (o, k) => intentFields.readBool(o, k, ''),
    int: (o, k) => intentFields.readInt(o, k, ''),
    object: (o, k) => intentFields.readObject(o, k, ''),
    objects: (o, k) => intentFields.readObjectArray(o, k, ''),
    strings: (o, k) => intentFields.readStringArray(o, k, ''),
    time: (o, k) => intentFields.readTime(o, k, ''),
  },
  envelope: {
    string: (o, k) => strictFields.readString(ENVELOPE, o, k),
    bool: (o, k) => strictFields.readBool(ENVELOPE, o, k),
    int: (o, k) => strictFields.readInt(ENVELOPE, o, k),
    object: (o, k) => strictFields.readObject(ENVELOPE, o, k),
    objects: (o, k) => strictFields.readObjectArray(ENVELOPE, o, k, 'ReferenceRecord'),
    strings: (o, k) => strictFields.readStringArray(ENVELOPE, o, k),
    time: (o, k) => strictFields.readTime(ENVELOPE, o, k),
  },
  token: {
    string: (o, k) => token.string(o, k),
    int: (o, k) => token.int(o, k),
    strings: (o, k) => token.strings(o, k),
    time: (o, k) => token.time(o, k),
  },
  toolCall: {
    string: (o, k) => payload.string(o, k),
    bool: (o, k) => payload.bool(o, k),
    object: (o, k) => payload.object(o, k),
    objects: (o, k) => payload.objects(o, k),
    strings: (o, k) => payload.strings(o, k),
  },
};

const ERROR = Symbol('error');
const ABSENT = Symbol('absent');

/** [kind, input value, expected value or ERROR]. */
const TABLE: [Kind, JsonValue | typeof ABSENT, unknown][] = [
  // integers: int64 range, integral numbers only
  ['int', ABSENT, 0],
  ['int', null, 0],
  ['int', 5, 5],
  ['int', -5, -5],
  ['int', -0, 0],
  ['int', 2 ** 53 - 1, 2 ** 53 - 1],
  ['int', 2 ** 53, 2 ** 53],
  ['int', 2 ** 53 + 2, 2 ** 53 + 2],
  ['int', -(2 ** 53) - 2, -(2 ** 53) - 2],
  ['int', 2 ** 62, 2 ** 62],
  ['int', 9223372036854775807, 2 ** 63], // the int64 maximum, as JSON.parse reads it
  ['int', -(2 ** 63), -(2 ** 63)],
  ['int', 2 ** 64, ERROR],
  ['int', -(2 ** 64), ERROR],
  ['int', 1e300, ERROR],
  ['int', 1.5, ERROR],
  ['int', -0.5, ERROR],
  ['int', 2 ** 53 + 0.5, 2 ** 53], // not representable: the double is the integer 2^53
  ['int', '5', ERROR],
  ['int', true, ERROR],
  ['int', [], ERROR],
  ['int', {}, ERROR],
  // strings and bools
  ['string', ABSENT, ''],
  ['string', null, ''],
  ['string', 'x', 'x'],
  ['string', 1, ERROR],
  ['string', false, ERROR],
  ['string', ['x'], ERROR],
  ['string', { a: 'x' }, ERROR],
  ['bool', null, false],
  ['bool', true, true],
  ['bool', 'true', ERROR],
  ['bool', 0, ERROR],
  // objects: null is "no object"
  ['object', ABSENT, undefined],
  ['object', null, undefined],
  ['object', { a: 1 }, { a: 1 }],
  ['object', [], ERROR],
  ['object', 'x', ERROR],
  ['object', 0, ERROR],
  // string arrays: a null element is ""
  ['strings', ABSENT, []],
  ['strings', null, []],
  ['strings', [], []],
  ['strings', ['a', 'b'], ['a', 'b']],
  ['strings', ['a', null], ['a', '']],
  ['strings', [null, null], ['', '']],
  ['strings', ['a', 1], ERROR],
  ['strings', ['a', ['b']], ERROR],
  ['strings', ['a', { b: 1 }], ERROR],
  ['strings', 'a', ERROR],
  ['strings', { 0: 'a' }, ERROR],
  // object arrays: a null element is {}
  ['objects', null, []],
  ['objects', [{ a: 1 }, null], [{ a: 1 }, {}]],
  ['objects', [1], ERROR],
  ['objects', [[]], ERROR],
  ['objects', ['x'], ERROR],
  ['objects', {}, ERROR],
  // times: strict RFC 3339 strings
  ['time', ABSENT, ZERO_TIME],
  ['time', null, ZERO_TIME],
  ['time', '2026-03-12T10:59:00.5+01:00', parseRFC3339('2026-03-12T10:59:00.5+01:00')],
  ['time', '2026-03-12 10:59:00Z', ERROR],
  ['time', '', ERROR],
  ['time', 0, ERROR],
  ['time', {}, ERROR],
];

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

function answer(read: Read, input: JsonValue | typeof ABSENT): unknown {
  const obj: JsonObject = input === ABSENT ? {} : { f: structuredClone(input) };
  const before = JSON.stringify(obj);
  deepFreeze(obj);
  try {
    const out = read(obj, 'f');
    expect(JSON.stringify(obj)).toBe(before);
    return out;
  } catch (err) {
    expect(err).toBeInstanceOf(WardError); // never a TypeError from writing into the frozen input
    return ERROR;
  }
}

describe('canon/decode: one rule for every user', () => {
  for (const [kind, input, expected] of TABLE) {
    const label = `${kind} ← ${input === ABSENT ? '(absent)' : Object.is(input, -0) ? '-0' : JSON.stringify(input)}`;
    it(label, () => {
      const users = Object.entries(USERS).filter(([, readers]) => readers[kind] !== undefined);
      expect(users.length).toBeGreaterThanOrEqual(2);
      for (const [name, readers] of users) {
        const got = answer(readers[kind]!, input);
        if (expected === ERROR) expect(got, name).toBe(ERROR);
        else expect(got, name).toStrictEqual(expected);
        if (kind === 'int' && got !== ERROR) expect(Object.is(got, -0), name).toBe(false);
      }
    });
  }

  it('arrays come back as new arrays, never the input', () => {
    const list = ['a'];
    const objects = [{ a: 1 }];
    for (const [name, readers] of Object.entries(USERS)) {
      if (readers.strings) expect(readers.strings({ f: list }, 'f'), name).not.toBe(list);
      if (readers.objects) expect(readers.objects({ f: objects }, 'f'), name).not.toBe(objects);
    }
  });

  it('words errors for each user and keeps its code', () => {
    const obj = { f: ['a', 1] };
    const error = (read: () => unknown) => {
      try {
        read();
      } catch (err) {
        return [(err as WardError).code, (err as Error).message];
      }
      return undefined;
    };
    expect(error(() => intentFields.readStringArray(obj, 'f', 'context.'))).toEqual([ERROR_CODES.INTENT_PARSE, 'parse intent json: context.f[1] must be a string']);
    expect(error(() => strictFields.readStringArray(ENVELOPE, obj, 'f', 'records'))).toEqual([
      ERROR_CODES.ENVELOPE_INVALID,
      'parse context envelope: json: cannot unmarshal number into Go struct field Envelope.records.f of type string',
    ]);
    expect(error(() => token.strings(obj, 'f'))).toEqual([ERROR_CODES.TOKEN_INVALID, 'approval token: f[1] must be a string']);
    expect(error(() => payload.at('context.').strings(obj, 'f'))).toEqual([ERROR_CODES.USAGE, 'decode mcp payload: context.f[1] must be a string']);
    expect(error(() => intentFields.readInt({ n: 1.5 }, 'n', ''))).toEqual([ERROR_CODES.INTENT_PARSE, 'parse intent json: n must be an integer']);
    expect(error(() => strictFields.readInt(ENVELOPE, { n: 2 ** 64 }, 'n', 'records'))).toEqual([
      ERROR_CODES.ENVELOPE_INVALID,
      'parse context envelope: json: cannot unmarshal number 18446744073709552000 into Go struct field Envelope.records.n of type int64',
    ]);
    expect(error(() => token.time({ t: 5 }, 't'))).toEqual([ERROR_CODES.TOKEN_INVALID, 'approval token: t: time must be an RFC 3339 string']);
  });
});

describe('canon/decode: the rule at each entry point', () => {
  const intent = (context: JsonObject) =>
    deepFreeze({ tool_name: 'tool.read', args: {}, targets: [], context: { identity: 'a', workspace: '/w', risk_class: 'low', ...context } });

  it('a null in a string list is "" for intents and tool-call payloads alike (and intents drop it)', () => {
    expect(normalizeIntent(intent({ credential_scopes: ['b', null, 'a'] })).context.credential_scopes).toEqual(['a', 'b']);
    const call = decodeToolCall('mcp', deepFreeze({ name: 'tool.read', context: { credential_scopes: ['b', null] } }));
    expect(call.context.credential_scopes).toEqual(['b', '']);
  });

  it('integers up to int64 are accepted by intents, envelopes and tokens alike', () => {
    const big = 2 ** 53 + 2;
    expect(normalizeIntent(intent({ credential_ttl_seconds: big })).context.credential_ttl_seconds).toBe(big);
    expect(() => normalizeIntent(intent({ credential_ttl_seconds: 2 ** 64 }))).toThrow(/credential_ttl_seconds must be an integer/);
    const record = {
      ref_id: 'r',
      source_type: 'doc',
      source_locator: 'file:///x',
      query_digest: 'a'.repeat(64),
      content_digest: 'b'.repeat(64),
      retrieved_at: '2026-03-12T11:59:55Z',
      redaction_mode: 'hashes',
      freshness_sla_seconds: big,
    };
    const envelope = parseContextEnvelope(JSON.stringify({ context_set_id: 'c', records: [record] }));
    expect(envelope.records[0]!.freshness_sla_seconds).toBe(big);
    const raw = {
      schema_id: 'gait.gate.approval_token',
      schema_version: '1.0.0',
      created_at: '2026-03-12T12:00:00Z',
      expires_at: '2026-03-12T13:00:00Z',
      token_id: 't',
      approver_identity: 'a',
      reason_code: 'r',
      intent_digest: 'a'.repeat(64),
      policy_digest: 'b'.repeat(64),
      scope: ['tool:x', null],
      max_targets: big,
    };
    const t = normalizeApprovalToken(deepFreeze(raw));
    expect(t.max_targets).toBe(big);
    expect(t.scope).toEqual(['tool:x']);
    expect(() => normalizeApprovalToken({ ...raw, max_ops: 0.5 })).toThrow('approval token: max_ops must be an integer');
  });

  it('decoding an intent never writes into it', () => {
    const raw = intent({ credential_scopes: [null], context_refs: [null] });
    expect(() => normalizeIntent(raw)).not.toThrow();
    const withNullTarget = deepFreeze({ ...structuredClone(raw), targets: [null] });
    expect(() => normalizeIntent(withNullTarget)).toThrow(WardError); // "targets require kind and value", not a TypeError
  });
});
