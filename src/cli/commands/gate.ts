import { resolve } from 'node:path';
import { Command, Option } from 'commander';
import { ERROR_CODES, WardError } from '../../errors.js';
import { EXIT } from '../../contract/exit-codes.js';
import { rawRiskClass } from '../../gate/evaluate.js';
import { explainOutcome } from '../../gate/explain.js';
import { checkProfileKeyFlags, isVerifyKeyConfigured, type KeyMode, type SigningKey } from '../../keys/index.js';
import { approvalCommand, approvalRetryNote, approvalTokenPath, shellQuote, type ApprovalSigner } from '../../decision/approval-command.js';
import { approvalSessionBound } from '../../decision/approval-binding.js';
import type { NormalizedPolicy } from '../../policy/types.js';
import { approvalCallOf, readApprovedScriptRegistry, requiredApprovalScope, type ApprovedScriptEntry } from '../../tokens/index.js';
import { loadPolicyFile } from '../../policy/load.js';
import { checkProfile } from '../../policy/profile.js';
import { resolveIntentHosts } from '../../decision/host-resolution.js';
import { runGate, type GateRequest, type GateResultOutput, type GateRuntime } from '../../decision/gate-run.js';
import { inputsRequired, loadApprovedScriptRegistry, loadEnvelope, loadKillSwitchAsync, loadWrkr } from '../../decision/inputs.js';
import { gateEvalSteps } from '../../decision/steps.js';
import { delegationDigest } from '../../intent/digest.js';
import type { NormalizedIntent } from '../../intent/types.js';
import type { TraceFormat } from '../../trace/index.js';
import { STATE_DIR_HELP, stateDir, type CliContext } from '../context.js';
import { daemonUrl, gateEvalOverDaemon, printDaemonJson } from '../daemon-client.js';
import { parseEvaluationTime, parseJsonInput, readInputText } from '../input.js';
import { correlationId, goJsonLine, omitEmpty } from '../output.js';
import { approvalSources, approvalStep, approvalTokenReuse, delegationStep, verifyKeysFor, type TokenFlags } from './gate-tokens.js';
import { signingKeyFromFlags } from './keys.js';

interface GateEvalFlags extends TokenFlags {
  captureIntents?: boolean;
  policy?: string;
  intent?: string;
  contextEnvelope?: string;
  evaluationTime?: string;
  traceOut?: string;
  traceFormat: TraceFormat;
  keyMode: KeyMode;
  privateKey?: string;
  privateKeyEnv?: string;
  profile: 'standard' | 'oss-prod';
  simulate?: boolean;
  json?: boolean;
  explain?: boolean;
  rateLimitState?: string;
  killSwitchState?: string;
  wrkrInventory?: string;
  stateDir?: string;
  credentialBroker: string;
  approvedScriptRegistry?: string;
  approvedScriptPublicKey?: string;
  approvedScriptPublicKeyEnv?: string;
  daemon?: string;
}

export function register(program: Command, ctx: CliContext): void {
  const gate = program.command('gate').description('evaluate tool-call intents against a policy');
  const evalCmd = gate
    .command('eval')
    .description('decide whether one intent may run: allow (exit 0), block (3), require_approval (4)')
    .option('--policy <file>', 'policy YAML (gait.gate.policy 1.0.0)')
    .option('--intent <file>', 'intent request JSON (gait.gate.intent_request), or - for stdin')
    .option('--context-envelope <file>', 'verified context envelope (ContextSpec v1) bound to the intent')
    .option('--evaluation-time <rfc3339>', 'clock for freeze windows, agent expiry, kill switch and context age')
    .option('--trace-out <file>', 'write the signed trace here (default .ward/traces/trace_<trace_id>.json)')
    .addOption(new Option('--trace-format <format>', 'trace field set').choices(['ward', 'gait']).default('ward'))
    .addOption(
      new Option('--key-mode <mode>', 'signing key: default (.ward/keys), dev (ephemeral) or prod (explicit key)')
        .choices(['default', 'dev', 'prod'])
        .default('default'),
    )
    .option('--private-key <file>', 'trace signing key file (base64, JWK or PEM)')
    .option('--private-key-env <var>', 'environment variable holding the signing key')
    .addOption(new Option('--profile <profile>', 'evaluation profile').choices(['standard', 'oss-prod']).default('standard'))
    .option('--simulate', 'non-enforcing: report what would have happened, always exit 0')
    .option('--json', 'one line of JSON on stdout')
    .option('--capture-intents', 'keep the normalized intent (and context envelope) beside the trace for `ward regress replay`; may hold sensitive arguments')
    .option('--explain', 'with --json, print the gait.gate.policy_explain object instead')
    .option('--rate-limit-state <file>', 'rate-limit counters (default .ward/gate_rate_limits.json)')
    .option('--kill-switch-state <file>', 'kill-switch state JSON (gait.gate.kill_switch_state)')
    .option('--wrkr-inventory <file>', 'Wrkr tool inventory for context enrichment')
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--daemon <url>', 'ask a running ward serve (default $WARD_DAEMON_URL); its policy and key decide')
    .option('--approved-script-registry <file>', 'signed approved-script registry: a matching script skips policy evaluation')
    .option('--approved-script-public-key <file>', 'registry verify key (default: the approval verify key)')
    .option('--approved-script-public-key-env <var>', 'registry verify key from the environment')
    .addOption(
      new Option('--credential-broker <kind>', 'credential broker for rules with require_broker_credential').default('off'),
    );
  addTokenOptions(evalCmd);
  evalCmd.action(async (flags: GateEvalFlags) => {
    await gateEval(ctx, flags);
  });
}

function addTokenOptions(cmd: Command): void {
  cmd
    .option('--approval-token <file>', 'signed approval token (gait.gate.approval_token)')
    .option('--approval-token-chain <files>', 'comma-separated approval token files')
    .option('--approval-token-ref <ref>', 'approval reference recorded in the trace')
    .option('--approval-token-reuse <mode>', 'once (default): a token grants one decision; ttl: reusable until it expires (docs/approvals.md)', 'once')
    .option('--approval-audit-out <file>', 'approval audit record path')
    .option('--approval-public-key <file>', 'approval verify key')
    .option('--approval-public-key-env <var>', 'approval verify key from the environment')
    .option('--approval-jwks <file>', "approval verify keys as a JWKS (one key per approver, for require_distinct_approvers)")
    .option('--approval-private-key <file>', 'derive the approval verify key from this private key')
    .option('--approval-private-key-env <var>', 'derive the approval verify key from this environment variable')
    .option('--delegation-token <file>', 'signed delegation token (gait.gate.delegation_token)')
    .option('--delegation-token-chain <files>', 'comma-separated delegation token files')
    .option('--delegation-audit-out <file>', 'delegation audit record path')
    .option('--delegation-public-key <file>', 'delegation verify key')
    .option('--delegation-public-key-env <var>', 'delegation verify key from the environment')
    .option('--delegation-private-key <file>', 'derive the delegation verify key from this private key')
    .option('--delegation-private-key-env <var>', 'derive the delegation verify key from this environment variable');
}

async function gateEval(ctx: CliContext, flags: GateEvalFlags): Promise<void> {
  const cid = correlationId(ctx.argv);
  if (flags.explain && !flags.json) {
    ctx.stdout('gate eval --explain --json prints why the policy decided (gait.gate.policy_explain) instead of the decision.\n');
    ctx.exitCode = EXIT.OK;
    return;
  }
  const daemon = daemonUrl(ctx, flags.daemon);
  if (daemon) return gateEvalWithDaemon(ctx, daemon, flags);
  if (!flags.policy || !flags.intent) {
    throw new WardError(ERROR_CODES.USAGE, 'both --policy and --intent are required', {
      hint: 'ward gate eval --policy policy.yaml --intent intent.json [--json]',
    });
  }
  const evaluationTime = parseEvaluationTime(flags.evaluationTime);
  checkEvalFlags(flags);
  const policy = loadPolicyFile(resolve(ctx.cwd, flags.policy));
  checkProfile(policy.policy, flags.profile);
  const intent = parseJsonInput(await readInputText(ctx, flags.intent, 'intent'), 'parse intent json', ERROR_CODES.INTENT_PARSE, {
    hint: `${flags.intent} must hold one JSON intent request (gait.gate.intent_request); see docs/intents.md`,
  });
  const highRisk = inputsRequired(flags.profile, rawRiskClass(intent));

  const state = stateDir(ctx, flags.stateDir);
  const warnings: string[] = [];
  const request: GateRequest = { intent, correlationId: cid };
  if (evaluationTime) request.evaluationTime = evaluationTime;
  if (flags.traceOut) request.traceOut = resolve(ctx.cwd, flags.traceOut);
  if (flags.approvalTokenRef) request.approvalTokenRef = flags.approvalTokenRef;
  await loadInputs(ctx, flags, request, highRisk, warnings);

  const key = signingKeyFromFlags(ctx, flags, state);
  warnings.push(...key.warnings);
  if (flags.approvedScriptRegistry) {
    const entries = loadApprovedScripts(ctx, flags, policy.policy, key.key, highRisk, warnings);
    if (entries) request.approvedScripts = entries;
  }
  const rt: GateRuntime = {
    policy,
    signingKey: key.key,
    traceFormat: flags.traceFormat,
    pathResolution: 'filesystem',
    traceDir: resolve(state, 'traces'),
    rateLimitStatePath: resolve(ctx.cwd, flags.rateLimitState ?? resolve(state, 'gate_rate_limits.json')),
    profile: flags.profile,
    captureIntents: Boolean(flags.captureIntents),
    approvalTokenReuse: approvalTokenReuse(flags.approvalTokenReuse),
    warnings,
  };
  // §3.6 steps 4–10, with tokens from the flags.
  const audits = resolve(state, 'audits');
  request.steps = gateEvalSteps(
    rt,
    { approvals: approvalStep(ctx, flags, key.key, audits), delegations: delegationStep(ctx, flags, key.key, audits) },
    { simulate: Boolean(flags.simulate) },
  );

  request.resolvedHosts = await resolveIntentHosts(policy.policy, [intent]);
  const result = runGate(rt, request);
  ctx.exitCode = result.exitCode;
  printEval(ctx, flags, cid, state, result, policy.policy);
}

/** §3.6 step 0: flags the profile or this Ward refuses (exit 6 or the profile error). */
function checkEvalFlags(flags: GateEvalFlags): void {
  if (flags.credentialBroker !== 'off') {
    throw new WardError(ERROR_CODES.USAGE, `unsupported --credential-broker ${flags.credentialBroker}: only off is available`, {
      hint: 'rules with require_broker_credential block until a broker is supported; omit --credential-broker',
    });
  }
  if (flags.profile === 'oss-prod' && flags.simulate) throw new WardError(ERROR_CODES.POLICY_PROFILE, 'oss-prod profile does not allow --simulate');
  checkProfileKeyFlags(flags.profile, flags, 'gate');
}

/** The decision as `--json`, `--explain --json` or text with the next step on require_approval. */
function printEval(ctx: CliContext, flags: GateEvalFlags, cid: string, state: string, result: GateResultOutput, policy: NormalizedPolicy): void {
  if (flags.json && flags.explain) {
    const explained = explainOutcome(result.outcome, {
      traceId: String(result.output['trace_id']),
      tracePath: result.tracePath,
      ...(typeof result.output['approval_audit_path'] === 'string' ? { approvalAuditPath: result.output['approval_audit_path'] } : {}),
      ...(typeof result.output['delegation_audit_path'] === 'string'
        ? { delegationAuditPath: result.output['delegation_audit_path'] }
        : {}),
    });
    ctx.stdout(goJsonLine({ ...explained, correlation_id: cid }) + '\n');
    return;
  }
  if (flags.json) {
    ctx.stdout(goJsonLine({ ...omitEmpty(result.output), correlation_id: cid }) + '\n');
    return;
  }
  ctx.stdout(renderText(result.output) + approvalNextStep(ctx, flags, state, result.output, result.outcome.preparedIntent, policy));
}

/**
 * On require_approval, the `ward approve` command that unblocks this intent, verbatim from any
 * directory (absolute paths, the real way to run this Ward, the key the retry verifies with), and
 * how to retry with the token it writes.
 */
function approvalNextStep(ctx: CliContext, flags: GateEvalFlags, state: string, out: Record<string, unknown>, intent: NormalizedIntent | undefined, policy: NormalizedPolicy): string {
  if (out['verdict'] !== 'require_approval' || !intent) return '';
  const callBound = !approvalSessionBound(policy, String(out['matched_rule'] ?? '').split(',').filter(Boolean));
  const intentDigest = String(out['intent_digest']);
  const tokenPath = approvalTokenPath(resolve(state, 'approvals'), intentDigest);
  let signer: ApprovalSigner;
  let note = '';
  if (isVerifyKeyConfigured(approvalSources(flags))) {
    signer = { approverKey: true };
    note = '  (tokens must verify with --approval-public-key/--approval-jwks: each approver signs with their own --private-key)\n';
  } else if (flags.privateKey) signer = { privateKeyPath: resolve(ctx.cwd, flags.privateKey) };
  else if (flags.privateKeyEnv) signer = { privateKeyEnv: flags.privateKeyEnv };
  else signer = { stateDir: state };
  if (flags.keyMode === 'dev') note = '  (--key-mode dev signs with a throwaway key, so no token can verify: evaluate without it)\n';
  const command = approvalCommand({
    intentDigest,
    policyDigest: String(out['policy_digest']),
    scope: requiredApprovalScope(intent),
    delegationBindingDigest: intent.delegation ? delegationDigest(intent.delegation) : undefined,
    callDigest: callBound ? approvalCallOf(intent).callDigest : undefined,
    signer,
    out: tokenPath,
  });
  return (
    'next: a person approves exactly this call with (runs from any directory):\n' +
    `  ${command}\n` +
    note +
    `then run the same gate eval again with --approval-token ${shellQuote(tokenPath)}` +
    ' (several approvers: --approval-token-chain a.json,b.json); a token grants one decision\n' +
    `${approvalRetryNote(intent.tool_name, callBound)}\n`
  );
}

/** §3.6 step 1: the registry from `--approved-script-registry`, verified (decision/inputs.ts decides the fallbacks). */
function loadApprovedScripts(
  ctx: CliContext,
  flags: GateEvalFlags,
  policy: NormalizedPolicy,
  signingKey: SigningKey,
  highRisk: boolean,
  warnings: string[],
): ApprovedScriptEntry[] | undefined {
  const own = { publicKeyPath: flags.approvedScriptPublicKey, publicKeyEnv: flags.approvedScriptPublicKeyEnv };
  return loadApprovedScriptRegistry(
    {
      registry: () => readApprovedScriptRegistry(flags.approvedScriptRegistry!, ctx.cwd),
      verifyKeys: () => verifyKeysFor(ctx, [own, approvalSources(flags)], signingKey),
    },
    policy,
    highRisk,
    warnings,
  );
}

/** Envelope, Wrkr inventory and kill switch, with their fail-closed fallbacks (decision/inputs.ts). */
async function loadInputs(ctx: CliContext, flags: GateEvalFlags, request: GateRequest, required: boolean, warnings: string[]): Promise<void> {
  if (flags.contextEnvelope) {
    const path = flags.contextEnvelope;
    const { envelope, json } = await loadEnvelope(() => readInputText(ctx, path, 'context envelope'), path);
    request.contextEnvelope = envelope;
    if (flags.captureIntents) request.contextEnvelopeJson = json;
  }
  if (flags.wrkrInventory) {
    const path = flags.wrkrInventory;
    const wrkr = await loadWrkr(() => readInputText(ctx, path, 'wrkr inventory'), path, required, warnings);
    if (wrkr) request.wrkr = wrkr;
  }
  if (flags.killSwitchState) {
    const path = flags.killSwitchState;
    request.killSwitch = await loadKillSwitchAsync(() => readInputText(ctx, path, 'kill switch state'), { required, path });
  }
}

/** `--daemon`: the daemon decides with its policy and key; flags that configure a local decision are refused. */
async function gateEvalWithDaemon(ctx: CliContext, daemon: string, flags: GateEvalFlags): Promise<void> {
  if (!flags.intent) throw new WardError(ERROR_CODES.USAGE, '--intent is required', { hint: 'ward gate eval --daemon URL --intent intent.json [--json]' });
  const local = (['traceOut', 'rateLimitState', 'killSwitchState', 'wrkrInventory', 'approvedScriptRegistry', 'privateKey', 'privateKeyEnv', 'approvalAuditOut', 'delegationAuditOut'] as const).filter((k) => flags[k]);
  if (approvalTokenReuse(flags.approvalTokenReuse) !== 'once') {
    throw new WardError(ERROR_CODES.USAGE, "--approval-token-reuse ttl is not available with --daemon: the daemon's configuration decides", { hint: 'start the daemon with ward serve --approval-token-reuse ttl' });
  }
  if (local.length > 0) {
    const flag = `--${local[0]!.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    throw new WardError(ERROR_CODES.USAGE, `${flag} is not available with --daemon: the daemon's configuration decides`, { hint: 'drop the flag, or evaluate locally without --daemon / WARD_DAEMON_URL' });
  }
  const reply = await gateEvalOverDaemon(ctx, daemon, { ...flags, intent: flags.intent });
  if (flags.policy && reply.json['policy_digest'] && loadPolicyFile(resolve(ctx.cwd, flags.policy)).digest !== reply.json['policy_digest']) {
    ctx.stderr(`warning: the daemon decided with policy ${String(reply.json['policy_digest']).slice(0, 12)}, not ${flags.policy}\n`);
  }
  ctx.exitCode = reply.exitCode;
  if (flags.json) printDaemonJson(ctx, reply.json);
  else ctx.stdout(renderText(reply.json));
}

function renderText(out: Record<string, unknown>): string {
  const lines = [`verdict: ${String(out['verdict'])}`];
  const list = (key: string, label: string) => {
    const v = out[key];
    if (Array.isArray(v) && v.length) lines.push(`${label}: ${v.join(', ')}`);
  };
  list('reason_codes', 'reasons');
  list('violations', 'violations');
  if (out['matched_rule']) lines.push(`matched rule: ${String(out['matched_rule'])}`);
  const reasons = Array.isArray(out['reason_codes']) ? out['reason_codes'] : [];
  if (out['verdict'] === 'block' && reasons.includes('destructive_apply_requires_approval')) {
    // The code says why the call is dangerous; on a block it must not read as "get an approval".
    lines.push(
      `why: destructive_apply_requires_approval marks a destructive change; ${out['matched_rule'] ? `rule ${String(out['matched_rule'])}` : 'the policy'} blocks it outright, so no approval lets it through`,
    );
  }
  if (out['required_approvals']) {
    lines.push(`approvals: ${String(out['valid_approvals'] ?? 0)} of ${String(out['required_approvals'])} valid`);
  }
  if (out['would_have_blocked']) lines.push(`simulate: would have been ${String(out['simulated_verdict'])}`);
  lines.push(`intent digest: ${String(out['intent_digest'])}`);
  lines.push(`policy digest: ${String(out['policy_digest'])}`);
  lines.push(`trace: ${String(out['trace_path'])}`);
  list('warnings', 'warnings');
  return lines.join('\n') + '\n';
}


