import { basename } from 'node:path';
import { compareUtf8, digestJcs, isJsonObject, isSha256Hex, jcs, sha256Hex, type JsonObject } from '../canon/index.js';
import { expectRootObject, readObjectArray, readString, readStringArray, rejectUnknownFields, type Decoder } from '../context/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { utcOr1980 } from '../runpack/index.js';
import { buildPack, type BuildPackOptions, type BuiltPack } from './build.js';
import { parseSignedJson } from './manifest.js';
import { AUTHORIZATION_BUNDLE_FILE, AUTHORIZATION_PAYLOAD_SCHEMA, type PackManifest } from './types.js';

/**
 * Authorization packs bundle one gate decision: its signed trace and the audit records the gate
 * wrote next to it (approval, delegation, broker credential). The reference's bundle schema is not
 * part of the contract Ward has, so the bundle is a Ward artifact (`ward.*` id, Ward decision 1)
 * that follows the reference's verification rules (§1.7 step 8, authorization).
 */
export const AUTHORIZATION_BUNDLE_SCHEMA = { id: 'ward.pack.authorization_bundle', version: '1.0.0' } as const;
export const EVIDENCE_DIR = 'evidence/';

/** Audit record schema ids the gate writes, and the evidence kind each one is. */
const EVIDENCE_KINDS: Readonly<Record<string, string>> = {
  'gait.gate.trace': 'trace',
  'gait.gate.approval_audit_record': 'approval_audit',
  'gait.gate.delegation_audit_record': 'delegation_audit',
  'gait.gate.broker_credential_record': 'credential_evidence',
};

export interface EvidenceFile {
  /** File name; stored as `evidence/<basename>`. */
  name: string;
  bytes: Buffer;
}

export interface LinkedEvidence {
  kind: string;
  path: string;
  digest: string;
}

export interface AuthorizationBundle {
  schema_id: string;
  schema_version: string;
  created_at: string;
  trace_id: string;
  tool_name: string;
  verdict: string;
  policy_digest: string;
  intent_digest: string;
  trace_path: string;
  trace_digest: string;
  linked_evidence: LinkedEvidence[];
  required_evidence: string[];
}

/** JCS digest for JSON files, raw sha256 otherwise (the reference's evidence digest rule). */
export function evidenceDigest(path: string, bytes: Buffer): string {
  if (!path.toLowerCase().endsWith('.json')) return sha256Hex(bytes);
  return digestJcs(parseSignedJson(bytes));
}

/**
 * Bundle a decision: the trace plus its audit files. An audit file naming a trace_id must name
 * this trace, and the audits the trace implies (approval tokens, delegation, a broker
 * credential) must all be present.
 */
export function buildAuthorizationPack(trace: EvidenceFile, audits: readonly EvidenceFile[], options: Omit<BuildPackOptions, 'packType' | 'sourceRef'>): BuiltPack & { bundle: AuthorizationBundle } {
  const traceRecord = jsonObject(trace);
  if (kindOf(traceRecord, trace.name) !== 'trace') throw usage(`${trace.name}: not a gate trace (schema_id gait.gate.trace)`);
  const traceId = str(traceRecord, 'trace_id');
  if (!traceId) throw usage(`${trace.name}: trace_id is required`);
  const files = [trace, ...audits];
  const seen = new Set<string>();
  const linked: LinkedEvidence[] = files.map((file) => {
    const path = basename(file.name);
    if (seen.has(path)) throw usage(`evidence file name used twice: ${path}`);
    seen.add(path);
    const record = jsonObject(file);
    const kind = kindOf(record, file.name);
    const owner = str(record, 'trace_id');
    if (owner !== '' && owner !== traceId) throw usage(`${file.name}: belongs to trace ${owner}, not ${traceId}`);
    return { kind, path, digest: evidenceDigest(path, file.bytes) };
  });
  const required = requiredEvidence(traceRecord);
  const kinds = new Set(linked.map((l) => l.kind));
  const missing = required.filter((k) => !kinds.has(k));
  if (missing.length > 0) throw usage(`decision ${traceId} needs evidence not given: ${missing.join(', ')}`);

  const bundle: AuthorizationBundle = {
    schema_id: AUTHORIZATION_BUNDLE_SCHEMA.id,
    schema_version: AUTHORIZATION_BUNDLE_SCHEMA.version,
    created_at: utcOr1980(str(traceRecord, 'created_at') || '1980-01-01T00:00:00Z'),
    trace_id: traceId,
    tool_name: str(traceRecord, 'tool_name'),
    verdict: str(traceRecord, 'verdict'),
    policy_digest: str(traceRecord, 'policy_digest'),
    intent_digest: str(traceRecord, 'intent_digest'),
    trace_path: linked[0]!.path,
    trace_digest: linked[0]!.digest,
    linked_evidence: [...linked].sort((a, b) => compareUtf8(a.path, b.path)),
    required_evidence: required,
  };
  const packFiles = [
    { path: AUTHORIZATION_BUNDLE_FILE, data: Buffer.from(jcs(bundle as unknown as JsonObject)) },
    ...files.map((f) => ({ path: EVIDENCE_DIR + basename(f.name), data: f.bytes })),
  ];
  return { ...buildPack(packFiles, { ...options, packType: 'authorization', sourceRef: traceId }), bundle };
}

/** The audits a trace implies: approval tokens were examined, delegation was used, a credential was brokered. */
function requiredEvidence(trace: JsonObject): string[] {
  const out: string[] = [];
  if (str(trace, 'approval_token_ref')) out.push('approval_audit');
  if (isJsonObject(trace['delegation_ref'])) out.push('delegation_audit');
  if (str(trace, 'broker_credential_ref')) out.push('credential_evidence');
  return out;
}

const DECODER: Decoder = { prefix: 'parse authorization_bundle.json: ', root: 'AuthorizationBundle', code: ERROR_CODES.PACK_VERIFY_FAILED };
const BUNDLE_KEYS = new Set([
  'schema_id',
  'schema_version',
  'created_at',
  'trace_id',
  'tool_name',
  'verdict',
  'policy_digest',
  'intent_digest',
  'trace_path',
  'trace_digest',
  'linked_evidence',
  'required_evidence',
]);
const LINK_KEYS = new Set(['kind', 'path', 'digest']);

export function decodeAuthorizationBundle(bytes: Buffer): AuthorizationBundle {
  const root = expectRootObject(DECODER, parseSignedJson(bytes));
  rejectUnknownFields(DECODER, root, BUNDLE_KEYS);
  const s = (key: string) => readString(DECODER, root, key);
  return {
    schema_id: s('schema_id'),
    schema_version: s('schema_version'),
    created_at: s('created_at'),
    trace_id: s('trace_id'),
    tool_name: s('tool_name'),
    verdict: s('verdict'),
    policy_digest: s('policy_digest'),
    intent_digest: s('intent_digest'),
    trace_path: s('trace_path'),
    trace_digest: s('trace_digest'),
    linked_evidence: readObjectArray(DECODER, root, 'linked_evidence', 'LinkedEvidence').map((link) => {
      rejectUnknownFields(DECODER, link, LINK_KEYS);
      return { kind: readString(DECODER, link, 'kind'), path: readString(DECODER, link, 'path'), digest: readString(DECODER, link, 'digest') };
    }),
    required_evidence: readStringArray(DECODER, root, 'required_evidence'),
  };
}

/** The authorization payload contract: schema, required fields, every linked file present with its digest. */
export function checkAuthorizationPayload(manifest: PackManifest, files: ReadonlyMap<string, Buffer>): AuthorizationBundle {
  const bytes = files.get(AUTHORIZATION_BUNDLE_FILE);
  if (!bytes) throw fail(`authorization pack missing ${AUTHORIZATION_BUNDLE_FILE}`);
  const bundle = decodeAuthorizationBundle(bytes);
  if (bundle.schema_id !== AUTHORIZATION_BUNDLE_SCHEMA.id || bundle.schema_version !== AUTHORIZATION_BUNDLE_SCHEMA.version) {
    throw fail(`unsupported authorization bundle schema: ${bundle.schema_id} ${bundle.schema_version}`);
  }
  if (!bundle.trace_id || bundle.trace_id !== manifest.source_ref) throw fail('authorization bundle trace_id does not match manifest source_ref');
  if (!isSha256Hex(bundle.policy_digest) || !isSha256Hex(bundle.intent_digest)) throw fail('authorization bundle digests must be sha256 hex');
  if (!bundle.trace_path || !bundle.trace_digest) throw fail('authorization bundle requires trace_path and trace_digest');
  const links = new Map(bundle.linked_evidence.map((l) => [l.path, l]));
  const trace = links.get(bundle.trace_path);
  if (!trace || trace.digest !== bundle.trace_digest || trace.kind !== 'trace') throw fail('authorization bundle trace is not linked evidence');
  for (const link of bundle.linked_evidence) {
    const data = files.get(EVIDENCE_DIR + link.path);
    if (!data) throw fail(`linked evidence missing: ${EVIDENCE_DIR}${link.path}`);
    if (evidenceDigest(link.path, data) !== link.digest) throw fail(`linked evidence digest mismatch: ${EVIDENCE_DIR}${link.path}`);
  }
  const kinds = new Set(bundle.linked_evidence.map((l) => l.kind));
  for (const kind of bundle.required_evidence) if (!kinds.has(kind)) throw fail(`required evidence missing: ${kind}`);
  return bundle;
}

/** The derived `authorization_payload` inspect shows (§2). */
export function authorizationPayload(bundle: AuthorizationBundle): JsonObject {
  return {
    schema_id: AUTHORIZATION_PAYLOAD_SCHEMA.id,
    schema_version: AUTHORIZATION_PAYLOAD_SCHEMA.version,
    created_at: bundle.created_at,
    trace_id: bundle.trace_id,
    policy_digest: bundle.policy_digest,
    intent_digest: bundle.intent_digest,
    linked_evidence_count: bundle.linked_evidence.length,
    required_evidence_count: bundle.required_evidence.length,
  };
}

function jsonObject(file: EvidenceFile): JsonObject {
  let value;
  try {
    value = parseSignedJson(file.bytes);
  } catch (err) {
    throw usage(`${file.name}: ${(err as Error).message}`);
  }
  if (!isJsonObject(value)) throw usage(`${file.name}: expected a JSON object`);
  return value;
}

function kindOf(record: JsonObject, name: string): string {
  const kind = EVIDENCE_KINDS[str(record, 'schema_id')];
  if (!kind) throw usage(`${name}: unsupported evidence schema_id ${JSON.stringify(str(record, 'schema_id'))}`);
  return kind;
}

function str(obj: JsonObject, key: string): string {
  const value = obj[key];
  return typeof value === 'string' ? value : '';
}

function usage(message: string): WardError {
  return new WardError(ERROR_CODES.PACK_INVALID, message);
}

function fail(message: string): WardError {
  return new WardError(ERROR_CODES.PACK_VERIFY_FAILED, message);
}
