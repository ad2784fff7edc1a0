import { sign, verify } from 'node:crypto';
import { compareUtf8, digestJcs, isJsonObject, jcs, parseJsonText, type JsonObject, type JsonValue } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import type { SigningKey, VerifyKey } from '../keys/index.js';
import { PACK_CREATED_AT, type PackContent } from './types.js';

/** One payload file as the proof chain describes it. */
export interface ProofEntry {
  path: string;
  type: string;
  sha256: string;
  size: number;
  /** Unix permission bits (0644 → 420 in JSON). */
  mode: number;
}

export interface ProofContext {
  packType: string;
  sourceRef: string;
  producerVersion: string;
}

const FIXED = {
  record_version: '1.0',
  timestamp: PACK_CREATED_AT,
  source: 'gait.pack',
  source_product: 'gait',
  agent_id: 'gait',
  record_type: 'tool_invocation',
} as const;
const CONTROLS = { permissions_enforced: false };
const METADATA = { artifact_kind: 'gait.pack.entry' };
const RECORD_HASH = /^sha256:[a-f0-9]{64}$/;
const SIGNATURE = /^(base64|cosign):.+/;
const REQUIRED = ['record_id', 'record_version', 'timestamp', 'source', 'source_product', 'record_type', 'event', 'controls', 'integrity'];

/**
 * `proof_records.jsonl` (§1.6): one chained `tool_invocation` record per payload file in path
 * order, joined by `\n` without a trailing newline. With a key, each record hash is signed
 * (Ed25519 over the UTF-8 bytes of the `sha256:` string).
 */
export function buildProofRecords(entries: readonly ProofEntry[], ctx: ProofContext, key?: SigningKey, form: ProofHashForm = 'reference'): Buffer {
  let previous = '';
  const lines = [...entries]
    .sort((a, b) => compareUtf8(a.path, b.path))
    .map((entry) => {
      const event: JsonObject = {
        pack_type: ctx.packType,
        source_ref: ctx.sourceRef,
        producer_version: ctx.producerVersion,
        entry_path: entry.path,
        entry_type: entry.type,
        entry_sha256: entry.sha256,
        entry_size_bytes: entry.size,
        entry_permissions: entry.mode,
      };
      const recordId = `prf-${FIXED.timestamp}-${digestJcs({ ...withoutVersion(), event }).slice(0, 8)}`;
      const integrity: JsonObject = {};
      if (previous) integrity['previous_record_hash'] = previous;
      const record: JsonObject = { record_id: recordId, ...FIXED, event, controls: CONTROLS, metadata: METADATA, integrity };
      const hash = recordHash(record, form);
      integrity['record_hash'] = hash;
      if (key) {
        integrity['signing_key_id'] = key.keyId;
        integrity['signature'] = `base64:${sign(null, Buffer.from(hash, 'utf8'), key.privateKey).toString('base64')}`;
      }
      previous = hash;
      return jcs(record);
    });
  return Buffer.from(lines.join('\n'));
}

function withoutVersion(): JsonObject {
  const { record_version: _v, ...rest } = FIXED;
  return rest;
}

/**
 * How the first record's chain link is hashed: `reference` as Gait does (`{"previous_record_hash": ""}`),
 * `legacy` as Ward did before 2026-11-28 (`{}`). Later records hash alike in both forms.
 */
export type ProofHashForm = 'reference' | 'legacy';

/** `sha256:` + digest of the record without its hash and signature (only the chain link of `integrity`). */
function recordHash(record: JsonObject, form: ProofHashForm = 'reference'): string {
  const integrity = record['integrity'] as JsonObject;
  const hashed: JsonObject = {};
  for (const key of ['record_id', 'record_version', 'timestamp', 'source', 'source_product', 'agent_id', 'record_type', 'event', 'controls', 'metadata', 'relations', 'relationship']) {
    if (record[key] !== undefined) hashed[key] = record[key]!;
  }
  const previous = typeof integrity['previous_record_hash'] === 'string' ? integrity['previous_record_hash'] : '';
  // The reference keeps the member, empty, for the first record; Ward builds before 2026-11-28 left it out.
  hashed['integrity'] = form === 'legacy' && previous === '' ? {} : { previous_record_hash: previous };
  return `sha256:${digestJcs(hashed)}`;
}

export interface ProofVerification {
  records: number;
  /** Problems with record signatures; reported only when signatures are required and keys given. */
  signatureErrors: string[];
  /** The first record hashes only in Ward's pre-2026-11-28 form (`integrity: {}`); see `ward pack upgrade`. */
  legacy: boolean;
}

/**
 * §1.7 step 7: every line parses, has the required fields and formats, its record hash recomputes
 * and chains to the previous one. Ward also checks each record describes a declared file with the
 * declared hash, so the chain cannot vouch for content the manifest does not list.
 */
export function verifyProofRecords(
  bytes: Buffer,
  contents: readonly PackContent[],
  keys: readonly VerifyKey[] | undefined,
  checkSignatures: boolean,
): ProofVerification {
  const declared = new Map(contents.map((c) => [c.path, c.sha256.toLowerCase()]));
  const signatureErrors: string[] = [];
  let previous = '';
  let count = 0;
  let legacy = false;
  bytes
    .toString('utf8')
    .split('\n')
    .forEach((line, index) => {
      if (line.trim() === '') return;
      const n = index + 1;
      const fail = (what: string) => new WardError(ERROR_CODES.PACK_VERIFY_FAILED, `proof_records.jsonl: line ${n} ${what}`);
      let value: JsonValue;
      try {
        value = parseJsonText(line);
      } catch (err) {
        throw fail(`invalid JSON: ${(err as Error).message}`);
      }
      if (!isJsonObject(value)) throw fail('is not an object');
      for (const field of REQUIRED) if (value[field] === undefined) throw fail(`missing ${field}`);
      const integrity = value['integrity'];
      const event = value['event'];
      if (!isJsonObject(integrity) || !isJsonObject(event) || !isJsonObject(value['controls'])) throw fail('has malformed event, controls or integrity');
      const stored = integrity['record_hash'];
      if (typeof stored !== 'string' || !RECORD_HASH.test(stored)) throw fail('record_hash is malformed');
      if (integrity['signature'] !== undefined && (typeof integrity['signature'] !== 'string' || !SIGNATURE.test(integrity['signature']))) {
        throw fail('signature is malformed');
      }
      if (recordHash(value) !== stored) {
        // Only the first record can be in the legacy form: later ones hash alike in both.
        if (previous !== '' || recordHash(value, 'legacy') !== stored) throw fail('record_hash mismatch');
        legacy = true;
      }
      const link = typeof integrity['previous_record_hash'] === 'string' ? integrity['previous_record_hash'] : '';
      if (link !== previous) throw fail(previous === '' ? 'first record must not link to a previous record' : 'chain link mismatch');
      const path = event['entry_path'];
      if (typeof path !== 'string' || declared.get(path) !== String(event['entry_sha256']).toLowerCase()) {
        throw fail('describes a file the manifest does not declare with that hash');
      }
      if (checkSignatures && keys && keys.length > 0) {
        const problem = recordSignatureProblem(integrity, stored, keys);
        if (problem) signatureErrors.push(`proof_records line ${n} ${problem}`);
      }
      previous = stored;
      count++;
    });
  return { records: count, signatureErrors, legacy };
}

function recordSignatureProblem(integrity: JsonObject, hash: string, keys: readonly VerifyKey[]): string | undefined {
  const signature = integrity['signature'];
  const keyId = integrity['signing_key_id'];
  if (typeof signature !== 'string' || signature === '') return 'missing signature';
  if (typeof keyId !== 'string' || keyId === '') return 'missing signing_key_id';
  if (!signature.startsWith('base64:')) return 'unsupported signature prefix';
  const raw = Buffer.from(signature.slice('base64:'.length), 'base64');
  const candidates = keys.filter((k) => k.keyId === keyId.toLowerCase());
  const ok = candidates.some((k) => raw.length === 64 && verify(null, Buffer.from(hash, 'utf8'), k.publicKey, raw));
  return ok ? undefined : 'signature verification failed';
}
