/*
 * Which calls `mcp serve --pack-dir` packs on its own (`mcp-decision-service.md` §6.3 step 10).
 * Kept apart from artifacts.ts so that deciding whether to build a pack does not load the code
 * that builds one (zip, fflate, zlib): a hook call almost never builds a pack.
 */

const READ_OPERATIONS = new Set(['read', 'list', 'query', 'search', 'inspect', 'get', 'fetch', 'head', 'describe']);
const WRITE_TOKENS = new Set([
  'write', 'create', 'update', 'delete', 'remove', 'put', 'post', 'patch', 'insert', 'upsert', 'drop', 'truncate',
  'move', 'rename', 'copy', 'send', 'publish', 'deploy', 'apply', 'exec', 'execute', 'run', 'shell', 'kill', 'set',
  'edit', 'append', 'upload', 'merge', 'push', 'commit', 'refund', 'transfer', 'pay', 'charge', 'grant', 'revoke',
]);

/**
 * `mcp serve --pack-dir` auto-emits a pack for state-changing calls (§6.3 step 10): any target
 * operation outside the read-like set, or a tool-name token that names a change.
 */
export function isStateChanging(toolName: string, operations: readonly string[]): boolean {
  if (operations.some((op) => op !== '' && !READ_OPERATIONS.has(op))) return true;
  return toolName
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .some((token) => WRITE_TOKENS.has(token));
}
