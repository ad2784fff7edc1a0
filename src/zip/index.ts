export { writeDeterministicZip, writeDeterministicZipFile, checkNames, normalizeMode, ZipStreamWriter } from './write.js';
export type { ZipFileInput } from './write.js';
export { openZip, openZipFile, duplicatePaths, aliasedPaths, DEFAULT_ZIP_LIMITS } from './read.js';
export type { ZipArchive, ZipFileArchive, ZipEntry, ZipLimits, OpenZipOptions } from './read.js';
export { entryKey, unsafePathReason, nonCanonicalNameReason, MAX_ENTRY_NAME_LENGTH } from './path.js';
