import { resolve } from 'node:path';
import { isJsonObject, type JsonObject } from '../../canon/index.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import { verifyMcpServer } from '../../decision-service/verify.js';
import { loadPolicyFile } from '../../policy/load.js';
import type { CliContext } from '../context.js';
import { parseJsonInput, readInputText } from '../input.js';
import { correlationId, goJsonLine } from '../output.js';

export interface McpVerifyFlags {
  policy?: string;
  server?: string;
  riskClass?: string;
  json?: boolean;
}

/**
 * `ward mcp verify --policy P --server server.json [--risk-class C]` (§6.7): would calls to this
 * MCP server pass the policy's `mcp_trust` block? Exit 0 allow, 3 block, 4 require_approval.
 */
export async function runMcpVerify(ctx: CliContext, flags: McpVerifyFlags): Promise<void> {
  if (!flags.policy) throw new WardError(ERROR_CODES.USAGE, 'missing required --policy', { hint: 'ward mcp verify --policy policy.yaml --server server.json' });
  if (!flags.server) throw new WardError(ERROR_CODES.USAGE, 'missing required --server', { hint: 'ward mcp verify --policy policy.yaml --server server.json' });
  const policy = loadPolicyFile(resolve(ctx.cwd, flags.policy));
  const raw = parseJsonInput(await readInputText(ctx, flags.server, 'server info'), 'parse server info json');
  if (!isJsonObject(raw)) throw new WardError(ERROR_CODES.USAGE, 'server info must be a JSON object');
  const { server, out, exitCode } = verifyMcpServer(policy, raw, flags.riskClass, ctx.cwd);
  ctx.exitCode = exitCode;
  if (flags.json) {
    ctx.stdout(goJsonLine({ ...out, correlation_id: correlationId(ctx.argv) }) + '\n');
    return;
  }
  const config = policy.policy.mcp_trust;
  const name = server.server_id || server.server_name;
  const lines = [`mcp verify: server=${name} verdict=${String(out['verdict'])}`];
  if (config.enabled) {
    const trust = out['mcp_trust'] as JsonObject;
    lines.push(`trust: ${String(trust['status'])} (snapshot ${config.snapshot})`);
    lines.push(`reasons: ${(out['reason_codes'] as string[]).join(', ')}`);
  } else lines.push('mcp_trust is not configured in this policy: every server is allowed');
  ctx.stdout(lines.join('\n') + '\n');
}
