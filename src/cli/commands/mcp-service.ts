import { Option, type Command } from 'commander';
import type { CliContext } from '../context.js';
import { runMcpServe, type McpServeFlags } from './mcp-serve.js';
import { runMcpVerify, type McpVerifyFlags } from './mcp-verify.js';
import { STATE_DIR_HELP } from '../context.js';

/**
 * `ward mcp serve` (the HTTP decision service) and `ward mcp verify` (MCP server trust), the
 * reference-compatible surface of `mcp-decision-service.md` §6.5 and §6.7.
 */
export function registerService(mcp: Command, ctx: CliContext): void {
  mcp
    .command('serve')
    .description('HTTP decision service: POST /v1/evaluate, /v1/evaluate/sse, /v1/evaluate/stream; GET /healthz')
    .option('--policy <file>', 'policy YAML (required)')
    .option('--context-envelope <file>', 'context envelope verified at startup and bound to every call')
    .option('--listen <host:port>', 'listen address; non-loopback requires --auth-mode token', '127.0.0.1:8787')
    .option('--adapter <name>', 'default payload adapter: mcp, openai, anthropic, claude_code, langchain, contextos', 'mcp')
    .addOption(new Option('--profile <profile>', 'evaluation profile').choices(['standard', 'oss-prod']).default('standard'))
    .option('--job-root <dir>', 'job runtime consulted for emergency stops (default .ward/jobs)')
    .option('--kill-switch-state <file>', 'kill-switch state JSON, read per request')
    .addOption(new Option('--auth-mode <mode>', 'bearer auth for /v1/evaluate*').choices(['off', 'token']).default('off'))
    .option('--auth-token-env <var>', 'environment variable holding the bearer token (with --auth-mode token)')
    .option('--max-request-bytes <n>', 'request body limit', String(1 << 20))
    .addOption(
      new Option('--http-verdict-status <mode>', 'compat: decisions are 200; strict: block 403, require_approval/dry_run 409')
        .choices(['compat', 'strict'])
        .default('compat'),
    )
    .option('--allow-client-artifact-paths', 'let requests name trace_path, runpack_out, pack_out, session_journal and context_envelope_path')
    .option('--trace-dir <dir>', 'where traces go (default .ward/traces)')
    .option('--runpack-dir <dir>', 'where emit_runpack and session checkpoints write runpacks')
    .option('--pack-dir <dir>', 'where packs go; state-changing calls get a pack automatically')
    .option('--session-dir <dir>', 'session journals (default .ward/mcp-serve/sessions)')
    .option('--trace-max-age <duration>', 'retention: remove traces older than this (Go duration, 0 disables)', '0')
    .option('--trace-max-count <n>', 'retention: keep at most n traces (0 disables)', '0')
    .option('--runpack-max-age <duration>', 'retention for runpacks', '0')
    .option('--runpack-max-count <n>', 'retention for runpacks', '0')
    .option('--pack-max-age <duration>', 'retention for packs', '0')
    .option('--pack-max-count <n>', 'retention for packs', '0')
    .option('--session-max-age <duration>', 'retention for session journals', '0')
    .option('--session-max-count <n>', 'retention for session journals', '0')
    .option('--export-log-out <file>', 'append one JSON decision event per call (locked JSONL)')
    .option('--export-otel-out <file>', 'append one OpenTelemetry-style log record per call (locked JSONL)')
    .addOption(
      new Option('--key-mode <mode>', 'signing key: default (.ward/keys), dev (ephemeral) or prod (explicit key)')
        .choices(['default', 'dev', 'prod'])
        .default('default'),
    )
    .option('--private-key <file>', 'trace signing key file')
    .option('--private-key-env <var>', 'environment variable holding the signing key')
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--json', 'print the startup line as JSON')
    .action(async (flags: McpServeFlags) => {
      await runMcpServe(ctx, flags);
    });

  mcp
    .command('verify')
    .description('check an MCP server against the policy\'s mcp_trust block: exit 0 allow, 3 block, 4 require_approval')
    .option('--policy <file>', 'policy YAML with an mcp_trust block (required)')
    .option('--server <file>', 'server info JSON {server_id|server_name, publisher?, source?} (required; - reads stdin)')
    .option('--risk-class <class>', 'risk class of the calls (default: the highest in mcp_trust.required_risk_classes)')
    .option('--json', 'one line of JSON on stdout')
    .action(async (flags: McpVerifyFlags) => {
      await runMcpVerify(ctx, flags);
    });
}
