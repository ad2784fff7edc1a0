import { jcs, type JsonValue } from '../../src/canon/index.js';
import { generateSigningKey } from '../../src/keys/index.js';
import { buildRunPack, type BuiltPack } from '../../src/pack/index.js';
import type { RunpackSummary } from '../../src/runpack/index.js';
import { openZip, writeDeterministicZip } from '../../src/zip/index.js';
import { mutateInput, record } from '../runpack/helpers.js';

export { errorOf, mutateInput, record, TEST_KEY } from '../runpack/helpers.js';

export const OTHER_KEY = generateSigningKey();

export function demoPack(options: { signed?: boolean; input?: string; runId?: string } = {}): BuiltPack & { runpack: RunpackSummary } {
  const { TEST_KEY } = sharedKeys;
  const runpack = record({ signingKey: TEST_KEY, ...(options.runId ? { runId: options.runId } : {}) }, options.input).bytes;
  return buildRunPack(runpack, { producerVersion: '0.1.0', signingKey: options.signed === false ? undefined : TEST_KEY });
}

import { TEST_KEY as KEY } from '../runpack/helpers.js';
const sharedKeys = { TEST_KEY: KEY };

/** Rewrite an archive's entries (no re-signing, no manifest update): how an attacker tampers. */
export function rezip(bytes: Buffer, mutate: (files: Map<string, Buffer>) => void): Buffer {
  const zip = openZip(bytes, { rejectDuplicates: false });
  const files = new Map(zip.entries.map((e) => [e.name, zip.read(e)]));
  mutate(files);
  return writeDeterministicZip([...files].map(([path, data]) => ({ path, data })));
}

export function json(value: unknown): Buffer {
  return Buffer.from(jcs(value as JsonValue));
}

/** The demo input with receipts retrieved at different times (same sources and contents). */
export const RETRIEVED_LATER = mutateInput((j) => {
  for (const receipt of j['refs']['receipts']) receipt['retrieved_at'] = '2026-02-06T08:00:00Z';
});

/** The demo input with one receipt pointing at different content. */
export const OTHER_CONTENT = mutateInput((j) => {
  j['refs']['receipts'][0]['content_digest'] = 'f'.repeat(64);
});
