import { shortId } from '../canon/index.js';

// The JSON output helpers live in the edge kit (hosts print through them too); the CLI keeps its names.
export { goJsonLine, omitEmpty, isGoEmpty, errorEnvelope, describeFailure, type CommandFailure } from '../edge/json-output.js';

/**
 * The reference `correlation_id`: first 12 bytes of sha256 over the trimmed argv (argv[0] is the
 * program path) joined by U+001F.
 */
export function correlationId(argv: readonly string[]): string {
  return shortId(argv.map((a) => a.trim()).join('\x1f'));
}
