// The local evidence store: traces, runpacks and packs indexed in LevelDB behind Ward's own lock,
// fed by a durable spool that short-lived commands write without opening the store.
export * from './types.js';
export { openLevelStore, storePaths, sortableTime, LevelStore, type StorePaths } from './level.js';
export { acquireStoreLock, type StoreLock } from './lock.js';
export { spoolTrace, spoolBytes, spoolDir, listSpool, type SpoolFile } from './spool.js';
export { describeArtifact } from './describe.js';
export { entryView, locateArtifact, resolveOneEntry, type LocatedArtifact } from './locate.js';
export { ID_MAX_LENGTH, ID_PATTERN, LOOKUP_PATTERN, idProblem, isValidId, checkId, quoteId, type CheckIdOptions } from './ids.js';
export {
  exportStore,
  importStore,
  exportPath,
  parseExportPath,
  STORE_ARCHIVE_LIMITS,
  EXPORT_DIRS,
  IMPORT_BATCH_ENTRIES,
  IMPORT_BATCH_BYTES,
  type ExportReport,
  type ImportReport,
} from './archive.js';
// The PostgreSQL store (postgres.ts) and the backend factory (open.ts) are imported by path, not
// through this index: the local LevelDB path never loads `pg`.
