// PackSpec v1 packs: build, verify, inspect, diff (`packs-regress.md` §1.4–§3).
export * from './types.js';
export { buildPack, type PackFile, type BuildPackOptions, type BuiltPack } from './build.js';
export { buildRunPack, runPayloadOf } from './run-pack.js';
export {
  buildAuthorizationPack,
  AUTHORIZATION_BUNDLE_SCHEMA,
  type AuthorizationBundle,
  type EvidenceFile,
  type LinkedEvidence,
} from './authorization.js';
export { verifyPack, packVerified, type VerifyPackOptions } from './verify.js';
export { upgradePack, type UpgradePackOptions, type UpgradedPack } from './upgrade.js';
export { inspectPack, runLineage } from './inspect.js';
export { diffPacks, diffViews } from './diff.js';
export { classifyRefsDrift, type DriftResult } from './drift.js';
export { openPackView, type PackView } from './read-side.js';
export { computePackId, parsePackManifest, contentType } from './manifest.js';
export { buildProofRecords, verifyProofRecords } from './proof.js';
