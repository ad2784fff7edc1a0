import { chmodSync, copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jcs, type JsonValue } from '../../src/canon/index.js';
import { REPO_ROOT } from './cli.js';

/** The in-repo copy of the reference's artifacts (hermetic; `tests/pack/gait-interop.test.ts` checks it against ../shared). */
export const GAIT = join(REPO_ROOT, 'fixtures', 'gait-interop');
/** The shared originals: beside the clone in the dev workspace and in CI. */
export const SHARED_GAIT = join(REPO_ROOT, '..', 'shared', 'fixtures', 'gait-interop');

export function gaitFile(name: string): string {
  return join(GAIT, name);
}

export function gaitJson(name: string): Record<string, any> {
  return JSON.parse(readFileSync(gaitFile(name), 'utf8')) as Record<string, any>;
}

/** The reference's `--json` output without what differs per invocation (correlation id) or per cwd (path, bundle). */
export function comparable(output: Record<string, any>, drop: readonly string[] = ['correlation_id', 'path']): Record<string, any> {
  const out = { ...output };
  for (const key of drop) delete out[key];
  return out;
}

/** The test key pair's private half in a 0600 copy (Ward refuses private keys others can read). */
export function privateKeyCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ward-gait-key-'));
  const path = join(dir, 'test_key_a_private.key');
  copyFileSync(gaitFile('test_key_a_private.key'), path);
  chmodSync(path, 0o600);
  return path;
}

/**
 * The fixture README's proof-record rule, written out independently of `src/pack/proof.ts`:
 * `sha256:` + hex sha256 of the JCS of the record with `integrity` replaced by
 * `{"previous_record_hash": <previous record's hash, "" for the first>}`.
 */
export function referenceRecordHash(record: Record<string, any>, previous: string): string {
  const hashed: Record<string, any> = { ...record, integrity: { previous_record_hash: previous } };
  return `sha256:${createHash('sha256').update(jcs(hashed as JsonValue)).digest('hex')}`;
}

/** Every line of a `proof_records.jsonl` checked against the reference rule and its chain; returns the problems. */
export function referenceChainProblems(jsonl: Buffer): string[] {
  const problems: string[] = [];
  let previous = '';
  jsonl
    .toString('utf8')
    .split('\n')
    .forEach((line, i) => {
      const record = JSON.parse(line) as Record<string, any>;
      const stored = record['integrity']['record_hash'] as string;
      if ((record['integrity']['previous_record_hash'] ?? '') !== previous) problems.push(`line ${i + 1}: chain link`);
      if (referenceRecordHash(record, previous) !== stored) problems.push(`line ${i + 1}: record_hash`);
      previous = stored;
    });
  return problems;
}
