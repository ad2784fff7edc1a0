export { normalizeIntent, INTENT_SCHEMA_ID, INTENT_SCHEMA_VERSION, MAX_SCRIPT_STEPS } from './normalize.js';
export {
  intentDigest,
  intentDigestPayload,
  argsDigest,
  scriptHashOf,
  targetsDigest,
  delegationDigest,
  delegationPayload,
  targetPayload,
} from './digest.js';
export { isCredentialKey, looksLikeSecretMaterial } from './secrets.js';
export type * from './types.js';
