import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { nowUTC } from '../../canon/gotime.js';
import { parseJsonText, type JsonObject } from '../../canon/json.js';
import { evaluate } from '../../gate/evaluate.js';
import { intentDigest } from '../../intent/digest.js';
import { resolveSigningKey } from '../../keys/index.js';
import { loadPolicyFile } from '../../policy/load.js';
import { runGate, type GateRuntime } from '../../runtime/gate-run.js';
import { mintApprovalToken, requiredApprovalScope } from '../../tokens/approval.js';
import { verifyTracePath } from '../../trace/verify-file.js';
import { WARD_VERSION } from '../../version.js';
import { stateDir, type CliContext } from '../context.js';
import { goJsonLine } from '../output.js';
import { approvalStep } from './gate-tokens.js';

const SHIPPED = fileURLToPath(new URL('../../../', import.meta.url));
const INTENTS = ['read-report', 'delete-database', 'write-config'] as const;

interface DemoStep {
  step: string;
  tool_name: string;
  verdict: string;
  reason_codes: string[];
  trace_path: string;
}

export function register(program: Command, ctx: CliContext): void {
  program
    .command('demo')
    .description('a 20-second tour: allow, block and approval decisions with signed, verified traces')
    .option('--json', 'print the summary as one line of JSON')
    .option('--state-dir <dir>', 'Ward state directory (the demo writes under <state>/demo)')
    .action((flags: { json?: boolean; stateDir?: string }) => demo(ctx, flags));
}

/** How the user ran Ward: `ward` when installed on PATH, else `node <path to bin/ward.js>`. */
function invocation(ctx: CliContext): string {
  const script = ctx.argv[0] ?? 'ward';
  if (basename(script) === 'ward') return 'ward';
  const rel = relative(ctx.cwd, script);
  return `node ${rel.startsWith('..') ? script : rel}`;
}

function demo(ctx: CliContext, flags: { json?: boolean; stateDir?: string }): void {
  const state = stateDir(ctx, flags.stateDir);
  const dir = join(state, 'demo');
  // Each run is a fresh tour: earlier demo traces would only blur the summary.
  rmSync(join(dir, 'traces'), { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const policyPath = join(dir, 'policy.yaml');
  copyFileSync(join(SHIPPED, 'policies', 'baseline-highrisk.yaml'), policyPath);
  for (const name of INTENTS) copyFileSync(join(SHIPPED, 'examples', 'quickstart', `${name}.json`), join(dir, `${name}.json`));

  const policy = loadPolicyFile(policyPath);
  const key = resolveSigningKey({ mode: 'default', stateDir: state, env: ctx.env, cwd: ctx.cwd });
  const rt: GateRuntime = {
    policy,
    signingKey: key.key,
    traceFormat: 'ward',
    traceDir: join(dir, 'traces'),
    rateLimitStatePath: join(dir, 'gate_rate_limits.json'),
    profile: 'standard',
  };
  const show = (p: string) => {
    const rel = relative(ctx.cwd, p);
    return rel === '' ? '.' : rel.startsWith('..') ? p : rel;
  };
  const steps: DemoStep[] = [];
  const record = (step: string, r: ReturnType<typeof runGate>) =>
    steps.push({
      step,
      tool_name: String(r.trace['tool_name']),
      verdict: String(r.output['verdict']),
      reason_codes: r.output['reason_codes'] as string[],
      trace_path: show(r.tracePath),
    });

  for (const name of INTENTS) {
    record(name, runGate(rt, { intent: parseJsonText(readFileSync(join(dir, `${name}.json`), 'utf8')) }));
  }

  // The write needs two distinct approvers: mint one token each, bound to the exact digests.
  const writeIntent = parseJsonText(readFileSync(join(dir, 'write-config.json'), 'utf8'));
  const prepared = evaluate(policy, writeIntent, { now: nowUTC() }).preparedIntent!;
  const tokenPaths = ['alice', 'bob'].map((approver) => {
    const token = mintApprovalToken({
      intentDigest: intentDigest(prepared),
      policyDigest: policy.digest,
      ttlNs: 3_600_000_000_000n,
      scope: requiredApprovalScope(prepared),
      approver: `${approver}@example.com`,
      reasonCode: 'demo_change_ticket',
      now: nowUTC(),
      producerVersion: WARD_VERSION,
      key: key.key,
    });
    const path = join(dir, `approval_${approver}.json`);
    writeFileSync(path, JSON.stringify(token, null, 2) + '\n', { mode: 0o600 });
    return path;
  });
  const approved = runGate(rt, {
    intent: writeIntent,
    approvals: approvalStep(ctx, { approvalTokenChain: tokenPaths.join(',') }, key.key, join(dir, 'audits')),
  });
  record('write-config + 2 approvals', approved);

  const verification = verifyTracePath(join(dir, 'traces'), [key.key]);
  const summary: JsonObject = {
    ok: verification.summary.failed === 0,
    policy: show(policyPath),
    policy_digest: policy.digest,
    key_id: key.key.keyId,
    steps: steps as unknown as JsonObject[],
    traces_verified: verification.summary.verified,
    traces_failed: verification.summary.failed,
    next_commands: [
      `${invocation(ctx)} gate eval --policy ${show(policyPath)} --intent ${show(join(dir, 'delete-database.json'))} --json`,
      `${invocation(ctx)} trace verify ${show(join(dir, 'traces'))}`,
      `${invocation(ctx)} policy validate ${show(join(SHIPPED, 'policies', 'baseline-mediumrisk.yaml'))}`,
    ],
  };
  ctx.exitCode = verification.summary.failed === 0 ? 0 : 2;
  if (flags.json) {
    ctx.stdout(goJsonLine(summary) + '\n');
    return;
  }
  const lines = [`Ward demo: policy ${show(policyPath)} (${policy.digest.slice(0, 12)}…), signing key ${key.key.keyId.slice(0, 12)}…`, ''];
  for (const [i, s] of steps.entries()) {
    lines.push(`  ${i + 1}. ${s.step.padEnd(28)} ${s.verdict.padEnd(17)} ${s.reason_codes.join(', ')}`);
  }
  lines.push('', `  traces: ${verification.summary.verified} verified, ${verification.summary.failed} failed (${show(join(dir, 'traces'))})`, '', 'Try next:');
  for (const c of summary['next_commands'] as string[]) lines.push(`  ${c}`);
  ctx.stdout(lines.join('\n') + '\n');
}
