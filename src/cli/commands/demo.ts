import { copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { formatRFC3339Nano, nowUTC, parseJsonText, type JsonObject } from '../../canon/index.js';
import { evaluate } from '../../gate/evaluate.js';
import { buildRunPack, packVerified, verifyPack } from '../../pack/index.js';
import { initFixture, readRegressConfig, regressJunit, renderRegressResult, runRegress } from '../../regress/index.js';
import { parseRunRecordInput, recordRunpack, runpackVerified, verifyRunpack } from '../../runpack/index.js';
import { writeFileAtomic } from '../../state/atomic-file.js';
import { intentDigest } from '../../intent/digest.js';
import { generateSigningKey, resolveSigningKey } from '../../keys/index.js';
import { loadPolicyFile } from '../../policy/load.js';
import { runGate, type GateRuntime } from '../../decision/gate-run.js';
import { gateEvalSteps } from '../../decision/steps.js';
import { approvalStep } from '../../decision/token-steps.js';
import { mintApprovalToken, readTokenFiles, requiredApprovalScope } from '../../tokens/index.js';
import { verifyTracePath } from '../../trace/index.js';
import { WARD_VERSION } from '../../version.js';
import { stateDir, wardInvocation, type CliContext } from '../context.js';
import { goJsonLine } from '../output.js';
import { platformEnv } from './run.js';

const SHIPPED = fileURLToPath(new URL('../../../', import.meta.url));
const INTENTS = ['read-report', 'delete-database', 'write-config'] as const;

const RUN_ID = 'run_ward_demo';

interface DemoStep {
  step: string;
  tool_name: string;
  args: JsonObject;
  verdict: string;
  reason_codes: string[];
  trace_id: string;
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
  // Text output is written as each stage finishes, so a terminal shows the tour progressing.
  const say = (line: string) => {
    if (!flags.json) ctx.stdout(line + '\n');
  };
  say(`Ward demo: policy ${show(policyPath)} (${policy.digest.slice(0, 12)}…), signing key ${key.key.keyId.slice(0, 12)}…`);
  say('');
  say('Decisions');
  const record = (step: string, intent: JsonObject, r: ReturnType<typeof runGate>) => {
    const s: DemoStep = {
      step,
      tool_name: String(r.trace['tool_name']),
      args: (intent['args'] as JsonObject | undefined) ?? {},
      verdict: String(r.output['verdict']),
      reason_codes: r.output['reason_codes'] as string[],
      trace_id: String(r.output['trace_id']),
      trace_path: show(r.tracePath),
    };
    steps.push(s);
    say(`  ${steps.length}. ${s.step.padEnd(28)} ${s.verdict.padEnd(17)} ${s.reason_codes.join(', ')}`);
  };

  for (const name of INTENTS) {
    const intent = parseJsonText(readFileSync(join(dir, `${name}.json`), 'utf8')) as JsonObject;
    record(name, intent, runGate(rt, { intent }));
  }

  // The write needs two distinct approvers: mint one token each, bound to the exact digests and
  // signed with each approver's own key (distinct approvers need distinct keys).
  const writeIntent = parseJsonText(readFileSync(join(dir, 'write-config.json'), 'utf8')) as JsonObject;
  const prepared = evaluate(policy, writeIntent, { now: nowUTC() }).preparedIntent!;
  const approverKeys = [key.key, generateSigningKey()];
  const tokenPaths = ['alice', 'bob'].map((approver, i) => {
    const token = mintApprovalToken({
      intentDigest: intentDigest(prepared),
      policyDigest: policy.digest,
      ttlNs: 3_600_000_000_000n,
      scope: requiredApprovalScope(prepared),
      approver: `${approver}@example.com`,
      reasonCode: 'demo_change_ticket',
      now: nowUTC(),
      producerVersion: WARD_VERSION,
      key: approverKeys[i]!,
    });
    const path = join(dir, `approval_${approver}.json`);
    writeFileAtomic(path, JSON.stringify(token, null, 2) + '\n', 0o600);
    return path;
  });
  const approvals = approvalStep({
    tokens: () => readTokenFiles(undefined, tokenPaths.join(','), ctx.cwd),
    verifyKeys: approverKeys,
    audit: { dir: join(dir, 'audits'), cwd: ctx.cwd },
  });
  const approved = runGate(rt, { intent: writeIntent, steps: gateEvalSteps(rt, { approvals }) });
  record('write-config + 2 approvals', writeIntent, approved);

  say('');
  say('Evidence');
  const verification = verifyTracePath(join(dir, 'traces'), [key.key]);
  say(`  traces    ${verification.summary.verified} verified, ${verification.summary.failed} failed (${show(join(dir, 'traces'))})`);

  // The session as a run: the runpack a CI regression starts from, and the portable pack built from it.
  const runRecordPath = join(dir, 'run_record.json');
  writeFileAtomic(runRecordPath, JSON.stringify(runRecordOf(steps), null, 2) + '\n', 0o644);
  const recorded = recordRunpack(parseRunRecordInput(readFileSync(runRecordPath, 'utf8')), {
    captureMode: 'raw',
    signingKey: key.key,
    now: nowUTC(),
    env: platformEnv(),
  });
  const runpackPath = join(dir, `runpack_${RUN_ID}.zip`);
  writeFileAtomic(runpackPath, recorded.bytes);
  const runpackOk = runpackVerified(verifyRunpack(readFileSync(runpackPath), { keys: [key.key], requireSignature: true }), true);
  say(`  runpack   ${show(runpackPath)} ${runpackOk ? 'verified' : 'FAILED verification'} (manifest sha256:${recorded.manifest.manifest_digest.slice(0, 12)}…, signed)`);

  const pack = buildRunPack(recorded.bytes, { producerVersion: WARD_VERSION, signingKey: key.key });
  const packPath = join(dir, `pack_${RUN_ID}.zip`);
  writeFileAtomic(packPath, pack.bytes);
  const packOk = packVerified(verifyPack(readFileSync(packPath), { keys: [key.key], requireSignature: true }), true);
  say(`  pack      ${show(packPath)} ${packOk ? 'verified' : 'FAILED verification'} (pack_id ${pack.manifest.pack_id.slice(0, 12)}…)`);

  // The run becomes a CI regression: a fixture beside its config, graded against itself.
  const regressDir = join(dir, 'regress');
  rmSync(regressDir, { recursive: true, force: true });
  const configPath = join(regressDir, 'ward.yaml');
  const fixture = initFixture({ cwd: ctx.cwd, runpackBytes: recorded.bytes, sourceLabel: show(runpackPath), name: 'demo', configPath });
  const regress = runRegress(readRegressConfig(configPath, show(configPath)), {
    cwd: regressDir,
    flags: { contextConformance: false, allowContextRuntimeDrift: false },
    producerVersion: WARD_VERSION,
  });
  writeFileAtomic(join(regressDir, 'regress_result.json'), renderRegressResult(regress));
  writeFileAtomic(join(regressDir, 'junit.xml'), regressJunit(regress));
  const regressOk = regress.status === 'pass';
  say(`  regress   fixture ${fixture.fixture_name}: ${regress.status} (${regress.graders.length} graders; ${show(join(regressDir, 'regress_result.json'))})`);

  const ok = verification.summary.failed === 0 && runpackOk && packOk && regressOk;
  const summary: JsonObject = {
    ok,
    policy: show(policyPath),
    policy_digest: policy.digest,
    key_id: key.key.keyId,
    steps: steps as unknown as JsonObject[],
    traces_verified: verification.summary.verified,
    traces_failed: verification.summary.failed,
    runpack_path: show(runpackPath),
    runpack_verified: runpackOk,
    manifest_digest: recorded.manifest.manifest_digest,
    pack_path: show(packPath),
    pack_id: pack.manifest.pack_id,
    pack_verified: packOk,
    regress_config: show(configPath),
    regress_status: regress.status,
    regress_graders: regress.graders.length,
    next_commands: [
      `${wardInvocation(ctx)} gate eval --policy ${show(policyPath)} --intent ${show(join(dir, 'delete-database.json'))} --json`,
      `${wardInvocation(ctx)} trace verify ${show(join(dir, 'traces'))}`,
      `${wardInvocation(ctx)} pack inspect ${show(packPath)}`,
      `${wardInvocation(ctx)} regress run --config ${show(configPath)}`,
      `${wardInvocation(ctx)} policy validate ${show(join(SHIPPED, 'policies', 'baseline-mediumrisk.yaml'))}`,
    ],
  };
  ctx.exitCode = ok ? 0 : 2;
  if (flags.json) {
    ctx.stdout(goJsonLine(summary) + '\n');
    return;
  }
  say('');
  say('Try next:');
  for (const c of summary['next_commands'] as string[]) say(`  ${c}`);
}

/** The demo session as a `run_record.json`: one intent and one result per decision. */
function runRecordOf(steps: readonly DemoStep[]): JsonObject {
  const now = nowUTC();
  const id = (i: number) => `intent_${i + 1}`;
  return {
    run: {
      schema_id: 'gait.runpack.run',
      schema_version: '1.0.0',
      created_at: formatRFC3339Nano(now),
      producer_version: WARD_VERSION,
      run_id: RUN_ID,
      env: platformEnv(),
      timeline: steps.map((_, i) => ({ event: 'tool_call', ts: formatRFC3339Nano(now), ref: id(i) })),
    },
    intents: steps.map((s, i) => ({ intent_id: id(i), tool_name: s.tool_name, args: s.args })),
    results: steps.map((s, i) => ({
      intent_id: id(i),
      status: s.verdict === 'allow' ? 'ok' : 'error',
      result: { verdict: s.verdict, reason_codes: s.reason_codes, trace_id: s.trace_id },
    })),
    capture_mode: 'raw',
  };
}
