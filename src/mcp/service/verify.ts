import { resolve } from 'node:path';
import { nowUTC } from '../../canon/gotime.js';
import { isJsonObject, type JsonObject } from '../../canon/json.js';
import { EXIT, type ExitCode } from '../../contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import { loadPolicyFile } from '../../policy/load.js';
import type { CliContext } from '../../cli/context.js';
import { parseJsonInput, readInputText } from '../../cli/input.js';
import { correlationId, goJsonLine } from '../../cli/output.js';
import { evaluateMcpTrust, mcpTrustDecisionJson, MCP_TRUST_POLICY_VIOLATION } from './trust.js';
import type { ServerInfo } from './tool-call.js';

export interface McpVerifyFlags {
  policy?: string;
  server?: string;
  riskClass?: string;
  json?: boolean;
}

const RISK_PRIORITY = ['critical', 'high', 'medium', 'low'];

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
  const server = serverInfo(raw);
  if (server.server_id === '' && server.server_name === '') {
    throw new WardError(ERROR_CODES.USAGE, 'server info requires server_id or server_name');
  }
  const config = policy.policy.mcp_trust;
  const out: JsonObject = { ok: true, server_id: server.server_id, server_name: server.server_name };
  let exitCode: ExitCode = EXIT.OK;
  if (!config.enabled) {
    Object.assign(out, { verdict: 'allow', reason_codes: [], violations: [] });
  } else {
    const riskClass =
      (flags.riskClass ?? '').trim().toLowerCase() || RISK_PRIORITY.find((c) => config.required_risk_classes.includes(c)) || 'high';
    const decision = evaluateMcpTrust({ config, server, riskClass, now: nowUTC(), cwd: ctx.cwd });
    const verdict = decision.enforced ? config.action : 'allow';
    exitCode = verdict === 'block' ? EXIT.BLOCKED : verdict === 'require_approval' ? EXIT.APPROVAL_REQUIRED : EXIT.OK;
    Object.assign(out, {
      trust_model: 'local_snapshot',
      snapshot_path: config.snapshot,
      verdict,
      reason_codes: decision.reason_codes,
      violations: decision.enforced ? [MCP_TRUST_POLICY_VIOLATION] : [],
      mcp_trust: mcpTrustDecisionJson(decision),
    });
  }
  ctx.exitCode = exitCode;
  if (flags.json) {
    ctx.stdout(goJsonLine({ ...out, correlation_id: correlationId(ctx.argv) }) + '\n');
    return;
  }
  const name = server.server_id || server.server_name;
  const lines = [`mcp verify: server=${name} verdict=${String(out['verdict'])}`];
  if (config.enabled) {
    const trust = out['mcp_trust'] as JsonObject;
    lines.push(`trust: ${String(trust['status'])} (snapshot ${config.snapshot})`);
    lines.push(`reasons: ${(out['reason_codes'] as string[]).join(', ')}`);
  } else lines.push('mcp_trust is not configured in this policy: every server is allowed');
  ctx.stdout(lines.join('\n') + '\n');
}

function serverInfo(raw: JsonObject): ServerInfo {
  const s = (k: string): string => {
    const v = raw[k];
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string') throw new WardError(ERROR_CODES.USAGE, `parse server info json: ${k} must be a string`);
    return v.trim();
  };
  return { server_id: s('server_id'), server_name: s('server_name'), publisher: s('publisher'), source: s('source'), endpoint: s('endpoint') };
}
