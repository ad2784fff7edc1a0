import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseRFC3339 } from '../../src/canon/index.js';
import { generateSigningKey, type SigningKey } from '../../src/keys/index.js';
import { parseRunRecordInput, recordRunpack, type RecordRunOptions, type RecordedRunpack } from '../../src/runpack/index.js';
import { isWardError } from '../../src/errors.js';

export const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));
export const DEMO_INPUT = readFileSync(`${FIXTURES}runs/run_record_demo.json`, 'utf8');
export const NOW = parseRFC3339('2026-03-01T00:00:00Z');
export const ENV = { os: 'linux', arch: 'amd64', runtime: 'node' };

export const TEST_KEY: SigningKey = generateSigningKey();

export function record(overrides: Partial<RecordRunOptions> = {}, input = DEMO_INPUT): RecordedRunpack {
  return recordRunpack(parseRunRecordInput(input), { now: NOW, env: ENV, ...overrides });
}

export function mutateInput(mutate: (json: Record<string, any>) => void, input = DEMO_INPUT): string {
  const json = JSON.parse(input) as Record<string, any>;
  mutate(json);
  return JSON.stringify(json);
}

export function errorOf(fn: () => unknown): { code: string; message: string; exitCode: number } {
  try {
    fn();
  } catch (err) {
    if (isWardError(err)) return { code: err.code, message: err.message, exitCode: err.exitCode };
    throw err;
  }
  throw new Error('expected an error');
}
