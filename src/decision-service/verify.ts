import { nowUTC, type JsonObject } from '../canon/index.js';
import { EXIT, type ExitCode } from '../contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../errors.js';
import type { LoadedPolicy } from '../policy/types.js';
import { evaluateMcpTrust, mcpTrustDecisionJson, MCP_TRUST_POLICY_VIOLATION } from './trust.js';
import type { ServerInfo } from '../agent-hooks/tool-call.js';

const RISK_PRIORITY = ['critical', 'high', 'medium', 'low'];

export interface McpServerVerdict {
  server: ServerInfo;
  /** The `mcp verify --json` object (without `correlation_id`). */
  out: JsonObject;
  /** 0 allow, 3 block, 4 require_approval. */
  exitCode: ExitCode;
}

/**
 * Would calls to this MCP server pass the policy's `mcp_trust` block (§6.7)? `raw` is the server
 * info object (`server_id` or `server_name`, `publisher`, `source`, `endpoint`); `riskClass`
 * defaults to the highest class the block requires.
 */
export function verifyMcpServer(policy: LoadedPolicy, raw: JsonObject, riskClassFlag: string | undefined, cwd: string): McpServerVerdict {
  const server = serverInfo(raw);
  if (server.server_id === '' && server.server_name === '') {
    throw new WardError(ERROR_CODES.USAGE, 'server info requires server_id or server_name');
  }
  const config = policy.policy.mcp_trust;
  const out: JsonObject = { ok: true, server_id: server.server_id, server_name: server.server_name };
  if (!config.enabled) {
    Object.assign(out, { verdict: 'allow', reason_codes: [], violations: [] });
    return { server, out, exitCode: EXIT.OK };
  }
  const riskClass = (riskClassFlag ?? '').trim().toLowerCase() || RISK_PRIORITY.find((c) => config.required_risk_classes.includes(c)) || 'high';
  const decision = evaluateMcpTrust({ config, server, riskClass, now: nowUTC(), cwd });
  const verdict = decision.enforced ? config.action : 'allow';
  Object.assign(out, {
    trust_model: 'local_snapshot',
    snapshot_path: config.snapshot,
    verdict,
    reason_codes: decision.reason_codes,
    violations: decision.enforced ? [MCP_TRUST_POLICY_VIOLATION] : [],
    mcp_trust: mcpTrustDecisionJson(decision),
  });
  const exitCode = verdict === 'block' ? EXIT.BLOCKED : verdict === 'require_approval' ? EXIT.APPROVAL_REQUIRED : EXIT.OK;
  return { server, out, exitCode };
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
