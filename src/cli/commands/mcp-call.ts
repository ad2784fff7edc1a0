import { EXIT } from '../../contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import type { KeyFlags } from '../../keys/index.js';
import { loadServiceConfig, sharedServiceFlags } from '../../decision-service/config.js';
import { evaluateDecision, type DecisionResult } from '../../decision-service/evaluate.js';
import { stateDir, type CliContext } from '../context.js';
import { parseJsonInput, readInputText } from '../input.js';
import { correlationId, goJsonLine } from '../output.js';

/**
 * The flags of `ward mcp proxy --call F|-` (commander's camelCase). The proxy command registers
 * them and hands the parsed object to `runMcpCall`.
 */
export interface McpCallFlags extends KeyFlags {
  call?: string;
  policy?: string;
  contextEnvelope?: string;
  adapter?: string;
  profile?: 'standard' | 'oss-prod';
  jobRoot?: string;
  killSwitchState?: string;
  traceOut?: string;
  runId?: string;
  runpackOut?: string;
  packOut?: string;
  exportLogOut?: string;
  exportOtelOut?: string;
  json?: boolean;
  stateDir?: string;
}

/**
 * `ward mcp proxy --call <file|->` (`mcp-decision-service.md` §6.4): read one payload, decide,
 * write the signed trace (and any runpack, pack and exports), print the decision, and set the
 * exit code from the verdict (0 allow/dry_run, 3 block, 4 require_approval). Failures throw a
 * WardError (exit 6 for bad input), which the CLI prints as `{ok:false, error, ...}`.
 */
export async function runMcpCall(ctx: CliContext, flags: McpCallFlags): Promise<void> {
  if (!flags.call) {
    throw new WardError(ERROR_CODES.USAGE, 'missing required --call', {
      hint: 'ward mcp proxy --policy policy.yaml --call call.json (or --call - to read stdin)',
    });
  }
  const cfg = loadServiceConfig({
    ...sharedServiceFlags(flags),
    stateDir: stateDir(ctx, flags.stateDir),
    cwd: ctx.cwd,
    env: ctx.env,
    serve: false,
  });
  const payload = parseJsonInput(await readInputText(ctx, flags.call, 'call payload'), 'parse call payload json');
  const result = await evaluateDecision(cfg, {
    payload,
    runId: flags.runId,
    traceOut: flags.traceOut,
    runpackOut: flags.runpackOut,
    packOut: flags.packOut,
  });
  ctx.exitCode = result.exitCode;
  if (flags.json) {
    ctx.stdout(goJsonLine({ ...result.output, correlation_id: correlationId(ctx.argv) }) + '\n');
    return;
  }
  ctx.stdout(renderDecisionText(result));
}

/** Text mode: `mcp proxy: verdict=…`, the reasons, `trace: …`, artifacts and warnings. */
export function renderDecisionText(result: DecisionResult, label = 'mcp proxy'): string {
  const o = result.output;
  const lines = [`${label}: verdict=${result.verdict} tool=${String(o['tool_name'] ?? '')}`];
  const list = (key: string, name: string) => {
    const v = o[key];
    if (Array.isArray(v) && v.length > 0) lines.push(`${name}: ${v.join(', ')}`);
  };
  list('reason_codes', 'reasons');
  list('violations', 'violations');
  lines.push(`trace: ${result.tracePath}`);
  for (const key of ['runpack_path', 'pack_path', 'log_export', 'otel_export'] as const) {
    if (typeof o[key] === 'string') lines.push(`${key.replace(/_/g, ' ').replace('path', '').trim()}: ${String(o[key])}`);
  }
  const warnings = o['warnings'];
  if (Array.isArray(warnings)) for (const w of warnings) lines.push(`warning: ${String(w)}`);
  if (result.exitCode === EXIT.BLOCKED) lines.push('the caller must not execute this tool call');
  return lines.join('\n') + '\n';
}
