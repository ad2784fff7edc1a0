export { jcs, MAX_JCS_DEPTH } from './jcs.js';
export { sha256Hex, sha256Bytes, digestJcs, shortId, isSha256Hex } from './digest.js';
export type { JsonValue, JsonObject } from './json.js';
export { isJsonObject, parseJsonText } from './json.js';
export { compareUtf8, uniqueSorted, uniqueSortedLower, goTrim, goLower } from './sort.js';
export type { GoTime } from './gotime.js';
export { parseGoDuration, formatGoDuration, addDuration, DurationError } from './duration.js';
export { goCleanPath } from './gopath.js';
export {
  ZERO_TIME,
  EPOCH_1980,
  isZeroTime,
  toUTC,
  compareTime,
  secondsBetween,
  addSeconds,
  parseRFC3339,
  parseJsonTime,
  formatRFC3339Nano,
  formatRFC3339Seconds,
  fromEpochMillis,
  toEpochMillis,
  nowUTC,
} from './gotime.js';
export {
  decodeString,
  decodeBool,
  decodeInt64,
  decodeObject,
  decodeObjectArray,
  decodeStringArray,
  decodeTime,
  plainFaultMessage,
  goFaultMessage,
  goJsonKind,
} from './decode.js';
export type { FieldType, FieldFault, FaultReporter } from './decode.js';
export { isJsonDuplicateKeyError } from './json.js';
export { daysFromCivil } from './gotime.js';
export { duplicateKeyDetails, parseStrictJson } from './strict-json.js';
export { closestMatch, oneOfHint } from './suggest.js';
export { caselessKey, foldSpelling } from './fold.js';
