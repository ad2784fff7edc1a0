import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseEvalBody, parseJsonBody } from '../../src/daemon/gate-body.js';
import { errorResponse, HttpError } from '../../src/edge/http-error.js';
import { REPO } from '../cli/run.js';

/**
 * In-process: for any eval body (the quickstart intent with random extra args), a key written a
 * second time in any of its objects makes the body a 400 that names that key and object; the same
 * body written once parses to the request it says.
 */
const INTENT = JSON.parse(readFileSync(join(REPO, 'examples', 'quickstart', 'read-report.json'), 'utf8')) as Record<string, unknown>;

interface Spot {
  node: Record<string, unknown>;
  path: string;
}

function objectsOf(value: unknown, path: string, out: Spot[]): Spot[] {
  if (Array.isArray(value)) value.forEach((v, i) => objectsOf(v, `${path}[${i}]`, out));
  else if (value !== null && typeof value === 'object') {
    const node = value as Record<string, unknown>;
    if (Object.keys(node).length > 0) out.push({ node, path });
    for (const [k, v] of Object.entries(node)) objectsOf(v, path + (/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`), out);
  }
  return out;
}

/** JSON.stringify, except that `spot` gets `name` a second time (with `extra`) after its first occurrence. */
function stringifyWithRepeat(value: unknown, spot: Record<string, unknown>, name: string, extra: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => stringifyWithRepeat(v, spot, name, extra)).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const members = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${stringifyWithRepeat(v, spot, name, extra)}`);
  if (value === spot) members.push(`${JSON.stringify(name)}:${JSON.stringify(extra)}`);
  return `{${members.join(',')}}`;
}

const argValue = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);
const body = fc.record({
  extraArgs: fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }).filter((k) => k !== 'path'), argValue, { maxKeys: 4 }),
  simulate: fc.boolean(),
  explain: fc.boolean(),
});

describe('daemon eval bodies with a repeated key', () => {
  it('property: refused with 400 naming the key and object, wherever the repeat is', () => {
    fc.assert(
      fc.property(body, fc.nat(), argValue, ({ extraArgs, simulate, explain }, pick, extra) => {
        const value = { intent: { ...INTENT, args: { ...(INTENT['args'] as object), ...extraArgs } }, simulate, explain };
        const text = JSON.stringify(value);
        expect(parseEvalBody(parseJsonBody(Buffer.from(text))).simulate).toBe(simulate);

        const spots = objectsOf(value, '$', []);
        const spot = spots[pick % spots.length]!;
        const names = Object.keys(spot.node);
        const name = names[pick % names.length]!;
        let thrown: unknown;
        try {
          parseEvalBody(parseJsonBody(Buffer.from(stringifyWithRepeat(value, spot.node, name, extra))));
        } catch (err) {
          thrown = err;
        }
        expect(thrown).toBeInstanceOf(HttpError);
        const reply = errorResponse(thrown);
        expect(reply.status).toBe(400);
        expect(reply.exitCode).toBe(6);
        expect(reply.body['error']).toBe(`invalid JSON body: duplicate key ${JSON.stringify(name)} at ${spot.path}`);
        expect(reply.body['duplicate_key']).toBe(name);
        expect(String(reply.body['duplicate_key_path']).startsWith(spot.path)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
