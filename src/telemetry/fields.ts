/**
 * A string member of JSON the telemetry reads without a type (a `gate eval --json` output, a signed
 * trace, an MCP request's `_meta`): the string, or '' when it is missing or not a string. A record
 * never carries a value of another type where it names a string.
 */
export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}
