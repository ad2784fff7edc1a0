import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseStrictJson } from '../../src/canon/strict-json.js';

/** An independent, minimal duplicate-member scanner: the reference. */
function referenceDuplicate(text: string): string | undefined {
  const stack: { object: boolean; keys: Set<string>; expectKey: boolean }[] = [];
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    const top = stack[stack.length - 1];
    if (ch === '{' || ch === '[') stack.push({ object: ch === '{', keys: new Set(), expectKey: ch === '{' });
    else if (ch === '}' || ch === ']') stack.pop();
    else if (ch === ',' && top?.object) top.expectKey = true;
    else if (ch === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (top?.object && top.expectKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.keys.has(key)) return key;
        top.keys.add(key);
        top.expectKey = false;
      }
      i = end;
    }
  }
  return undefined;
}

/** JSON text of `value` with one member of some object written twice (when it has an object with a member). */
function withDuplicate(value: unknown, pick: number): string | undefined {
  const text = JSON.stringify(value, null, pick % 2 ? 2 : undefined);
  const m = [...text.matchAll(/([{,]\s*)("(?:[^"\\]|\\.)*")(\s*:)/g)];
  if (m.length === 0) return undefined;
  const hit = m[pick % m.length]!;
  const at = hit.index! + hit[1]!.length;
  return `${text.slice(0, at)}${hit[2]}${hit[3]}0,${text.slice(at)}`;
}

const json = fc.jsonValue({ stringUnit: 'binary', maxDepth: 6 });

describe('parseStrictJson duplicate keys', () => {
  it('accepts JSON.stringify output (compact and pretty), as the reference scanner does', () => {
    fc.assert(
      fc.property(json, fc.boolean(), (v, pretty) => {
        const text = JSON.stringify(v, null, pretty ? 2 : undefined);
        expect(referenceDuplicate(text)).toBeUndefined();
        expect(parseStrictJson(text)).toEqual(JSON.parse(text));
      }),
      { numRuns: 500 },
    );
  });

  it('refuses a repeated member wherever it is, naming the same key as the reference scanner', () => {
    let checked = 0;
    fc.assert(
      fc.property(json, fc.nat(), (v, pick) => {
        const text = withDuplicate(v, pick);
        if (text === undefined) return;
        const key = referenceDuplicate(text);
        expect(key).toBeDefined();
        expect(() => parseStrictJson(text)).toThrow(`duplicate key ${JSON.stringify(key)}`);
        checked++;
      }),
      { numRuns: 500 },
    );
    expect(checked).toBeGreaterThan(100);
  });

  it('reads escaped quotes and backslashes inside keys and values', () => {
    expect(() => parseStrictJson('{"a\\\\":1,"a\\\\":2}')).toThrow('duplicate key "a\\\\"');
    expect(() => parseStrictJson('{"a\\"b":1,"x":"}\\"{","a\\"b":2}')).toThrow('duplicate key "a\\"b"');
    expect(parseStrictJson('{"a\\\\":1,"a":2}')).toEqual({ 'a\\': 1, a: 2 });
  });
});
