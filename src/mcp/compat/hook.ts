import { isJsonObject, parseJsonText, type JsonValue } from '../../canon/json.js';
import { EXIT } from '../../contract/exit-codes.js';
import { stateDir, type CliContext } from '../../cli/context.js';
import { loadServiceConfig, sharedServiceFlags } from './config.js';
import { evaluateDecision, type DecisionResult } from './evaluate.js';

/** `ward hook claude-code` flags. */
export interface ClaudeCodeHookFlags {
  policy?: string;
  contextEnvelope?: string;
  profile?: string;
  jobRoot?: string;
  killSwitchState?: string;
  exportLogOut?: string;
  exportOtelOut?: string;
  keyMode?: string;
  privateKey?: string;
  privateKeyEnv?: string;
  identity?: string;
  riskClass?: string;
  stateDir?: string;
}

export type PermissionDecision = 'allow' | 'deny' | 'ask';

export interface HookOutput {
  hookSpecificOutput: {
    hookEventName: 'PreToolUse';
    permissionDecision: PermissionDecision;
    permissionDecisionReason: string;
  };
}

/** The PreToolUse reply Claude Code reads from stdout. */
export function hookOutput(permissionDecision: PermissionDecision, permissionDecisionReason: string): HookOutput {
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision, permissionDecisionReason } };
}

/** Verdict → Claude Code permission: allow → allow, block → deny, require_approval → ask, dry_run → deny. */
export function hookOutputFor(result: DecisionResult): HookOutput {
  const reasons = result.reasonCodes.length > 0 ? result.reasonCodes.join(', ') : 'none';
  const trace = `trace ${String(result.output['trace_id'])}`;
  switch (result.verdict) {
    case 'allow':
      return hookOutput('allow', `Ward: allowed by policy (${reasons}); ${trace}`);
    case 'require_approval':
      return hookOutput(
        'ask',
        `Ward: approval required by policy (${reasons}); ask the user before running this tool call; ${trace}, intent ${result.intentDigest}`,
      );
    case 'dry_run':
      return hookOutput('deny', `Ward: dry run — the policy evaluates this call as dry_run, so it is not executed (${reasons}); ${trace}`);
    default:
      return hookOutput('deny', `Ward: blocked by policy (${reasons}). Do not retry this call unchanged; ${trace}`);
  }
}

/**
 * `ward hook claude-code --policy P`: read Claude Code's PreToolUse hook JSON on stdin, decide
 * through the `claude_code` adapter, write a signed trace, and print the `hookSpecificOutput`
 * reply. It always exits 0 with a valid reply: Claude Code acts on the JSON only when the hook
 * exits 0, and treats other non-zero exits (other than 2) as a non-blocking error that lets the
 * tool run. So every failure — empty or malformed input, an unreadable policy, a trace that
 * cannot be written — is answered with `deny` and the reason, never with a crash.
 */
export async function runClaudeCodeHook(ctx: CliContext, flags: ClaudeCodeHookFlags): Promise<void> {
  const reply = await decideHook(ctx, flags);
  ctx.stdout(JSON.stringify(reply) + '\n');
  ctx.exitCode = EXIT.OK;
}

async function decideHook(ctx: CliContext, flags: ClaudeCodeHookFlags): Promise<HookOutput> {
  const fail = (message: string): HookOutput => {
    ctx.stderr(`ward hook claude-code: ${message}\n`);
    return hookOutput('deny', `Ward: denied because the hook could not evaluate this call (fail closed): ${message}`);
  };
  let text: string;
  try {
    text = await ctx.readStdin();
  } catch (err) {
    return fail(`read stdin: ${(err as Error).message}`);
  }
  if (text.trim() === '') return fail('empty hook input on stdin');
  let payload: JsonValue;
  try {
    payload = parseJsonText(text);
  } catch (err) {
    return fail(`malformed hook input: ${(err as Error).message}`);
  }
  if (!isJsonObject(payload)) return fail('malformed hook input: expected a JSON object');
  const event = typeof payload['hook_event_name'] === 'string' ? payload['hook_event_name'] : '';
  if (event !== '' && event !== 'PreToolUse') return fail(`unsupported hook event ${JSON.stringify(event)}: register ward for PreToolUse`);
  try {
    const cfg = loadServiceConfig({
      ...sharedServiceFlags(flags),
      adapter: 'claude_code',
      stateDir: stateDir(ctx, flags.stateDir),
      cwd: ctx.cwd,
      env: ctx.env,
      serve: false,
    });
    const hookCwd = typeof payload['cwd'] === 'string' ? payload['cwd'] : '';
    const result = evaluateDecision(cfg, {
      payload,
      adapter: 'claude_code',
      enrichCall: (call) => {
        call.context.identity = (flags.identity ?? '').trim() || 'claude-code';
        call.context.workspace = hookCwd.trim() || ctx.cwd;
        if (flags.riskClass) call.context.risk_class = flags.riskClass;
      },
    });
    return hookOutputFor(result);
  } catch (err) {
    return fail((err as Error).message);
  }
}
