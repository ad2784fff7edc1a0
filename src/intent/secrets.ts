import { compareUtf8, type JsonValue } from '../canon/index.js';
import { invalidIntent } from './invalid.js';

const CREDENTIAL_KEY = /token|secret|api[_-]?key|access[_-]?key|password|credential/;
const REFERENCE_SUFFIX = /(_refs?|_digests?|_hash|_issuer|_source|_type|_ttl|_ttl_seconds|_ids?|_names?|_scopes?)$/;
const SAFE_PREFIXES = ['env:', 'stub:', 'cmd:', 'ref:', 'sha256:'];
const KNOWN_SECRET_PREFIXES = ['ghp_', 'gho_', 'github_pat_', 'sk-', 'AKIA', 'ASIA'];
const HEX64_ANY_CASE = /^[0-9a-fA-F]{64}$/;

/** A key that names credential material rather than a reference to it (`gate.md` §1.5). */
export function isCredentialKey(key: string): boolean {
  const lower = key.toLowerCase();
  return CREDENTIAL_KEY.test(lower) && !REFERENCE_SUFFIX.test(lower);
}

/** A string that looks like a live secret rather than a reference or digest. */
export function looksLikeSecretMaterial(value: string): boolean {
  if (SAFE_PREFIXES.some((p) => value.startsWith(p)) || HEX64_ANY_CASE.test(value)) return false;
  if (KNOWN_SECRET_PREFIXES.some((p) => value.startsWith(p))) return true;
  return Buffer.byteLength(value, 'utf8') >= 16 && !/\s/u.test(value) && /\p{L}/u.test(value) && /\p{Nd}/u.test(value);
}

/**
 * Reject raw credential material anywhere under `root` (keys visited in sorted order, so the first
 * error is deterministic). Array elements inherit their parent key: `{"tokens":["ghp_…"]}` is caught.
 */
export function assertNoRawCredentials(root: string, value: JsonValue): void {
  walk(root, '', value);
}

function walk(path: string, key: string, value: JsonValue): void {
  if (typeof value === 'string') {
    if (key !== '' && isCredentialKey(key) && looksLikeSecretMaterial(value)) {
      throw invalidIntent(`${path} must not contain raw credential material; use credential references or digests instead`);
    }
    return;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) walk(`${path}[${i}]`, key, value[i] as JsonValue);
    return;
  }
  if (value !== null && typeof value === 'object') {
    for (const k of Object.keys(value).sort(compareUtf8)) walk(`${path}.${k}`, k, value[k] as JsonValue);
  }
}

const ENV_ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;
const EVIDENCE_REF_PREFIXES = ['ref:', 'receipt:', 'proof:', 'sandbox:', 'sha256:'];

export function isEnvAssignment(value: string): boolean {
  return ENV_ASSIGNMENT.test(value);
}

/** Sandbox evidence refs must be references, never secrets or env assignments. */
export function isSafeEvidenceRef(value: string): boolean {
  if (EVIDENCE_REF_PREFIXES.some((p) => value.startsWith(p))) return true;
  return !isEnvAssignment(value) && !looksLikeSecretMaterial(value);
}
