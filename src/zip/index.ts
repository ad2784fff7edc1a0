export { writeDeterministicZip, normalizeMode } from './write.js';
export type { ZipFileInput } from './write.js';
export { openZip, duplicatePaths, DEFAULT_ZIP_LIMITS } from './read.js';
export type { ZipArchive, ZipEntry, ZipLimits, OpenZipOptions } from './read.js';
export { entryKey, unsafePathReason } from './path.js';
