import { readFileSync } from 'node:fs';
import { resolveIntentHosts, type HostResolver } from '../decision/host-resolution.js';
import type { ResolvedHosts } from '../intent/address.js';
import { isAbsolute, join, resolve } from 'node:path';
import { formatRFC3339Nano, isJsonObject, nowUTC, parseRFC3339, toUTC, uniqueSorted, type GoTime, type JsonObject, type JsonValue } from '../canon/index.js';
import { parseContextEnvelope, type ContextEnvelope } from '../context/index.js';
import { EXIT, type ExitCode } from '../contract/exit-codes.js';
import { isGoEmpty } from '../edge/json-output.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { killSwitchDecisionJson } from '../gate/kill-switch.js';
import type { NormalizedIntent } from '../intent/types.js';
import type { SigningKey } from '../keys/index.js';
import type { LoadedPolicy, Verdict } from '../policy/types.js';
import { inputsRequired, loadKillSwitch, type KillSwitchInput } from '../decision/inputs.js';
import type { PathResolution } from '../decision/path-view.js';
import { decide, type Decided } from '../decision/pipeline.js';
import { steps, type EmergencyStop, type McpTrustCheck } from '../decision/steps.js';
import { FileTraceSink } from '../decision/trace-sink.js';
import { writeFileAtomic, writeFileAtomicAsync, createUniqueFile } from '../state/atomic-file.js';
import { spoolBytes } from '../store/index.js';
import { checkedTracePath, traceFileText, type SignedTrace } from '../trace/index.js';
import { WARD_VERSION } from '../version.js';
import { decodeToolCall, normalizeAdapter, type AdapterName } from './adapters.js';
import { isStateChanging } from './state-changing.js';
import { contextOsResultEnvelope } from './contextos.js';
import { appendDecisionLog, appendOtelLog, type DecisionExport } from './exports.js';
import { FALLBACK_CONTEXT_WARNING, toIntentRequest, validateAuthEvidence, type Profile } from './intent.js';
import { checkEmergencyStop, recordBlockedDispatch } from './job-state.js';
import { appendJsonLine } from './jsonl.js';
import type { ToolCall } from '../agent-hooks/tool-call.js';
import { applyMcpTrust, evaluateMcpTrust, mcpTrustDecisionJson } from './trust.js';
import { InFlight } from '../decision/in-flight.js';

/**
 * The decision service: one payload in, one decision and its signed trace out
 * (`mcp-decision-service.md` §6.3, shared by `mcp proxy --call`, `mcp serve`, the daemon's
 * `/v1/evaluate*` routes and `ward hook <host>`). Tools are never executed (`executed: false`).
 */

/** Built once: per invocation for the CLI, once per server start for `mcp serve`. */
export interface DecisionServiceConfig {
  policy: LoadedPolicy;
  /** Resolves the targets' host names when the policy's domain lists need them (default: the system's, shared). */
  hostResolver?: HostResolver | undefined;
  signingKey: SigningKey;
  /** Warnings every decision repeats (e.g. the dev-key warning). */
  keyWarnings: readonly string[];
  profile: Profile;
  defaultAdapter: AdapterName;
  /** The verified boundary envelope (`--context-envelope`), bound to every call. */
  contextEnvelope?: ContextEnvelope | undefined;
  /** `mcp serve --allow-client-artifact-paths`: clients may name trace/runpack/pack/envelope paths. */
  allowClientArtifactPaths: boolean;
  /** `true` for `mcp serve` (client envelope paths are possible there); `false` for one-shot proxy. */
  serve: boolean;
  killSwitchStatePath?: string | undefined;
  /** The kill switch from elsewhere than a file (the cluster's control plane); wins over the path. */
  killSwitchSource?: (() => KillSwitchInput) | undefined;
  jobRoot: string;
  /** The job runtime to consult instead of `<jobRoot>/<job_id>/state.json` alone (the cluster's). */
  emergencyStop?: ((jobId: string) => EmergencyStop) | undefined;
  exportLogOut?: string | undefined;
  exportOtelOut?: string | undefined;
  cwd: string;
  /** Ward state directory: artifacts are also spooled there for the store. */
  stateDir: string;
  /** Directory for default-named traces (`trace_<run>_<ts>.json`). */
  traceDir: string;
  runpackDir?: string | undefined;
  packDir?: string | undefined;
  producerVersion?: string;
  /** `filesystem` for the hook and `mcp call` (the disk the tool uses is this one); `lexical` for `mcp serve` and the daemon. */
  pathResolution?: PathResolution | undefined;
}

/** One call. Paths are resolved against `cwd` of the config. */
export interface DecisionRequest {
  payload: JsonValue;
  adapter?: string | undefined;
  /** `--run-id` / the serve request's `run_id`. */
  runId?: string | undefined;
  /** The serve request's `session_id` (overrides `call.context.session_id` for journaling). */
  sessionId?: string | undefined;
  traceOut?: string | undefined;
  runpackOut?: string | undefined;
  emitRunpack?: boolean | undefined;
  packOut?: string | undefined;
  emitPack?: boolean | undefined;
  /** Adjust the decoded call before it becomes an intent (hook mode fills identity and workspace). */
  enrichCall?: ((call: ToolCall) => void) | undefined;
}

export interface DecisionResult {
  /** The decision object (§6.4), fields in the reference's struct order, empty fields omitted. */
  output: JsonObject;
  exitCode: ExitCode;
  trace: SignedTrace;
  tracePath: string;
  verdict: Verdict;
  reasonCodes: string[];
  call: ToolCall;
  adapter: AdapterName;
  runId: string;
  sessionId: string;
  intent: NormalizedIntent;
  intentDigest: string;
  policyDigest: string;
  /** Runpack bytes when one was built (serve checkpoints reuse them). */
  runpack?: Buffer;
}

/**
 * A decision whose signed trace is not written yet. `finish(tracePath)` runs the steps after the
 * trace (kill-switch journal, emergency-stop record, runpack/pack, exports) and shapes the output;
 * call it only once the trace is durable at `tracePath` (a returned decision always has its trace).
 */
export interface PendingDecisionResult {
  trace: SignedTrace;
  /** Where the trace goes: an explicit path (replaced), or the first free name in a directory. */
  target: { path: string } | { dir: string; names: readonly string[] };
  /**
   * Set when this call may build a runpack or pack: resolves once the code that builds them is
   * loaded. Await it before `finish` (evaluateDecision and evaluateDecisionAsync do).
   */
  artifactsReady?: Promise<void>;
  finish(tracePath: string): DecisionResult;
}

/** One decision, trace written synchronously: the one-shot `mcp proxy --call` and `hook <host>` paths. */
export async function evaluateDecision(cfg: DecisionServiceConfig, req: DecisionRequest): Promise<DecisionResult> {
  const pending = await prepareDecision(cfg, req);
  await pending.artifactsReady;
  return pending.finish(writeDecisionTrace(pending));
}

/**
 * One decision for a long-running server (`mcp serve`, the daemon's `/v1/evaluate*`): the trace is
 * written off the event loop (other requests are served meanwhile) and the decision exists only
 * once the trace is durable.
 */
export async function evaluateDecisionAsync(cfg: DecisionServiceConfig, req: DecisionRequest, writer: DecisionTraceWriter): Promise<DecisionResult> {
  const pending = await prepareDecision(cfg, req);
  const location = await writer.write(pending);
  await pending.artifactsReady;
  return pending.finish(location);
}

/** Steps 1–6 up to the signed trace (nothing written yet); the targets' host names are resolved first. */
export async function prepareDecision(cfg: DecisionServiceConfig, req: DecisionRequest): Promise<PendingDecisionResult> {
  const started = process.uptime() * 1000;
  const warnings: string[] = [...cfg.keyWarnings];
  const { adapter, call } = decodeCall(cfg, req);
  const envelope = bindEnvelope(cfg, call);
  const { intentJson, riskClass } = callIntent(cfg, call, warnings);
  const resolvedHosts = await resolveIntentHosts(cfg.policy.policy, [intentJson], cfg.hostResolver);
  const now = nowUTC();
  const decided = decideCall(cfg, call, intentJson, riskClass, envelope, now, resolvedHosts);
  const { intent } = decided.subject;
  if (decided.outcome.intentError) warnings.push(`intent not evaluable: ${decided.outcome.intentError.message}`);
  const stop = decided.records.emergencyStop;
  if (stop?.status === 'unavailable') warnings.push(`emergency stop state unavailable for job ${intent.context.job_id}: ${stop.detail}`);

  // 8 (needed by 6). Run id.
  const runId = normalizeRunId(req.runId ?? '') || normalizeRunId(call.context.run_id) || `run_mcp_${decided.subject.intentDigest.slice(0, 12)}`;
  const sessionId = (req.sessionId ?? '').trim() || intent.context.session_id;
  const c: CallDecided = { cfg, req, adapter, call, envelope, decided, now, runId, sessionId, warnings, started };
  const target = decisionTraceTarget(cfg, decided.trace, req.traceOut, req.runId ?? '');
  const artifactsReady = mayBuildArtifacts(cfg, req, intent) ? loadArtifacts() : undefined;
  return { trace: decided.trace, target, ...(artifactsReady ? { artifactsReady } : {}), finish: (tracePath) => finishDecision(c, tracePath) };
}

/** The runpack and pack builders, loaded only for a call that may build one (steps 9–10). */
let artifacts: typeof import('./artifacts.js') | undefined;

function loadArtifacts(): Promise<void> {
  return import('./artifacts.js').then((m) => {
    artifacts = m;
  });
}

/** Whether steps 9–10 may build anything for this call (their paths are checked only after the trace). */
function mayBuildArtifacts(cfg: DecisionServiceConfig, req: DecisionRequest, intent: NormalizedIntent): boolean {
  if (req.runpackOut || req.emitRunpack || req.packOut || req.emitPack) return true;
  return Boolean(cfg.serve && cfg.packDir && isStateChanging(intent.tool_name, intent.targets.map((t) => t.operation)));
}

/** A decided call, carried from the signed trace to the output. */
interface CallDecided {
  cfg: DecisionServiceConfig;
  req: DecisionRequest;
  adapter: AdapterName;
  call: ToolCall;
  envelope: ContextEnvelope | undefined;
  decided: Decided;
  /** The decision's clock (evaluation, trust, the blocked-dispatch record). */
  now: GoTime;
  runId: string;
  sessionId: string;
  warnings: string[];
  /** process.uptime() in ms when the request arrived (decision_latency_ms; not performance.now(), which loads perf_hooks). */
  started: number;
}

/** Step 1: decode by adapter. */
function decodeCall(cfg: DecisionServiceConfig, req: DecisionRequest): { adapter: AdapterName; call: ToolCall } {
  const adapter = req.adapter !== undefined && req.adapter.trim() !== '' ? normalizeAdapter(req.adapter) : cfg.defaultAdapter;
  const call = decodeToolCall(adapter, req.payload);
  req.enrichCall?.(call);
  return { adapter, call };
}

/** Step 3: profile and OAuth evidence, then the intent request. */
function callIntent(cfg: DecisionServiceConfig, call: ToolCall, warnings: string[]): { intentJson: JsonObject; riskClass: string } {
  validateAuthEvidence(call, cfg.profile);
  const conversion = toIntentRequest(call, cfg.profile);
  if (conversion.usedFallbackContext && cfg.profile === 'standard') warnings.push(FALLBACK_CONTEXT_WARNING);
  const intentJson = conversion.intent;
  const riskClass = String((intentJson['context'] as JsonObject)['risk_class']).trim().toLowerCase();
  return { intentJson, riskClass };
}

/**
 * Steps 3–6 through the decision pipeline: kill switch (fail-closed when required), evaluation,
 * MCP trust, emergency stop, and one signed trace, always. The service records only the kill
 * switch among the outcome's decision objects, as the reference does.
 */
function decideCall(
  cfg: DecisionServiceConfig,
  call: ToolCall,
  intentJson: JsonObject,
  riskClass: string,
  envelope: ContextEnvelope | undefined,
  now: GoTime,
  resolvedHosts: ResolvedHosts | undefined,
): Decided {
  const killSwitch = cfg.killSwitchSource ? cfg.killSwitchSource() : cfg.killSwitchStatePath ? loadServiceKillSwitch(cfg, cfg.killSwitchStatePath, riskClass) : undefined;
  const trustConfig = cfg.policy.policy.mcp_trust;
  const trust: McpTrustCheck = (s) => {
    const decision = evaluateMcpTrust({ config: trustConfig, server: call.server, riskClass: s.subject.intent.context.risk_class || riskClass, now: s.now, cwd: cfg.cwd });
    return { decision: applyMcpTrust(s.decision, decision, trustConfig.action), record: mcpTrustDecisionJson(decision) };
  };
  const jobRoot = resolve(cfg.cwd, cfg.jobRoot);
  return decide(
    {
      policy: cfg.policy,
      signingKey: cfg.signingKey,
      traceFormat: 'ward',
      ...(cfg.producerVersion !== undefined ? { producerVersion: cfg.producerVersion } : {}),
      ...(cfg.pathResolution ? { pathResolution: cfg.pathResolution } : {}),
    },
    {
      intent: intentJson,
      now,
      wallNow: now,
      contextEnvelope: envelope,
      killSwitch,
      resolvedHosts,
      steps: [...(trustConfig.enabled ? [steps.mcpTrust(trust)] : []), steps.emergencyStop(cfg.emergencyStop ?? ((jobId) => checkEmergencyStop(jobRoot, jobId)))],
      outcomeObjects: ['kill_switch'],
      relationshipExtras: call.relationshipExtras,
    },
  );
}

/** Steps 7–12, once the trace is durable at `tracePath`. */
function finishDecision(c: CallDecided, tracePath: string): DecisionResult {
  const { cfg, decided } = c;
  const { subject, decision, outcome } = decided;
  afterTrace(c);
  const artifacts = decisionArtifacts(c);
  const decisionLatencyMs = Math.floor(process.uptime() * 1000 - c.started);
  const exports = exportDecision(c, tracePath, decisionLatencyMs);
  // 12. Exit code.
  const exitCode: ExitCode = decision.verdict === 'block' ? EXIT.BLOCKED : decision.verdict === 'require_approval' ? EXIT.APPROVAL_REQUIRED : EXIT.OK;
  const traceId = String(decided.trace['trace_id']);
  const output = decisionOutput({
    adapter: c.adapter,
    runId: c.runId,
    jobId: subject.intent.context.job_id,
    phase: subject.intent.context.phase,
    sessionId: c.sessionId,
    toolName: subject.intent.tool_name,
    state: decision,
    policy: cfg.policy,
    matchedRuleIds: uniqueSorted(outcome.matchedRule.split(',')),
    intentDigest: subject.intentDigest,
    decisionLatencyMs,
    traceId,
    tracePath,
    runpackPath: artifacts.runpackPath,
    packPath: artifacts.packPath,
    packId: artifacts.packId,
    logExport: exports.log,
    otelExport: exports.otel,
    killSwitch: outcome.killSwitch ? killSwitchDecisionJson(outcome.killSwitch) : undefined,
    mcpTrust: decided.records.mcpTrust,
    warnings: c.warnings,
    relationship: isJsonObject(decided.trace['relationship']) ? decided.trace['relationship'] : undefined,
    resultEnvelope: c.call.contextos ? contextOsResultEnvelope(c.call.contextos.toolCallId, decision.verdict, decision.reasonCodes, traceId) : undefined,
  });
  return {
    output,
    exitCode,
    trace: decided.trace,
    tracePath,
    verdict: decision.verdict,
    reasonCodes: decision.reasonCodes,
    call: c.call,
    adapter: c.adapter,
    runId: c.runId,
    sessionId: c.sessionId,
    intent: subject.intent,
    intentDigest: subject.intentDigest,
    policyDigest: cfg.policy.digest,
    ...(artifacts.runpack ? { runpack: artifacts.runpack } : {}),
  };
}

/** Step 7 (kill-switch journal) and the emergency stop's blocked-dispatch record: best effort, as warnings. */
function afterTrace(c: CallDecided): void {
  const { cfg, decided, warnings } = c;
  const { intent } = decided.subject;
  const traceId = String(decided.trace['trace_id']);
  const ks = decided.outcome.killSwitch;
  if (ks?.status === 'active' && cfg.killSwitchStatePath) {
    const journal = join(resolve(cfg.cwd, cfg.killSwitchStatePath, '..'), 'kill_switch_journal.jsonl');
    try {
      appendJsonLine(
        journal,
        JSON.stringify({
          created_at: formatRFC3339Nano(nowUTC()),
          trace_id: traceId,
          tool_name: intent.tool_name,
          verdict: decided.decision.verdict,
          matched_entry_ids: [...ks.matched_entry_ids],
          reason_codes: [...ks.reason_codes],
        }),
      );
    } catch (err) {
      warnings.push(`kill switch journal not written: ${(err as Error).message}`);
    }
  }
  if (decided.records.emergencyStop?.status === 'stopped') {
    const w = recordBlockedDispatch(resolve(cfg.cwd, cfg.jobRoot), intent.context.job_id, { at: c.now, toolName: intent.tool_name, traceId, reasonCode: 'emergency_stop_preempted' });
    if (w) warnings.push(w);
  }
}

interface Artifacts {
  runpack?: Buffer;
  runpackPath: string;
  packPath: string;
  packId: string;
}

/** Steps 9–10: the optional runpack and pack, written and spooled for the store. */
function decisionArtifacts(c: CallDecided): Artifacts {
  const { cfg, req, decided, runId, warnings } = c;
  const { subject, decision } = decided;
  const runpackTarget = runpackPath(cfg, req, runId);
  const packTarget = packPath(cfg, req, runId, subject.intent);
  const none: Artifacts = { runpackPath: '', packPath: '', packId: '' };
  if (!runpackTarget && !packTarget) return none;
  if (!artifacts) throw new Error('decision artifacts are not loaded: await PendingDecisionResult.artifactsReady before finish');
  const { decisionPack, decisionRunpack } = artifacts;
  const recorded = decisionRunpack({
    runId,
    createdAt: formatRFC3339Nano(toUTC(parseRFC3339(decided.outcome.result.created_at))),
    producerVersion: cfg.producerVersion ?? WARD_VERSION,
    toolName: subject.intent.tool_name,
    argsDigest: subject.argsDigest,
    args: subject.intent.args,
    verdict: decision.verdict,
    reasonCodes: decision.reasonCodes,
    violations: decision.violations,
    traceId: String(decided.trace['trace_id']),
    envelope: c.envelope,
    signingKey: cfg.signingKey,
  });
  const out: Artifacts = { ...none, runpack: recorded.bytes };
  if (runpackTarget) {
    writeFileAtomic(runpackTarget, recorded.bytes);
    out.runpackPath = runpackTarget;
    spoolQuietly(cfg, 'runpack', recorded.bytes, warnings);
  }
  if (packTarget) {
    const pack = decisionPack(recorded.bytes, cfg.producerVersion ?? WARD_VERSION, cfg.signingKey);
    const path = packTarget === AUTO_PACK_NAME ? join(resolve(cfg.cwd, cfg.packDir!), `pack_${pack.packId}.zip`) : packTarget;
    writeFileAtomic(path, pack.bytes);
    out.packPath = path;
    out.packId = pack.packId;
    spoolQuietly(cfg, 'pack', pack.bytes, warnings);
  }
  return out;
}

/** Step 11: the append-only decision log and OpenTelemetry log, when configured. */
function exportDecision(c: CallDecided, tracePath: string, decisionLatencyMs: number): { log: string; otel: string } {
  const { cfg, decided } = c;
  const { intent } = decided.subject;
  const delegation = intent.delegation;
  const exported: DecisionExport = {
    createdAt: parseRFC3339(String(decided.trace['observed_at'])),
    producerVersion: cfg.producerVersion ?? WARD_VERSION,
    runId: c.runId,
    sessionId: c.sessionId,
    traceId: String(decided.trace['trace_id']),
    tracePath,
    toolName: intent.tool_name,
    verdict: decided.decision.verdict,
    reasonCodes: decided.decision.reasonCodes,
    policyDigest: cfg.policy.digest,
    intentDigest: decided.subject.intentDigest,
    decisionLatencyMs,
    delegationRef: delegation ? delegation.token_refs[0] ?? '' : '',
    delegationDepth: delegation ? delegation.chain.length : 0,
  };
  const out = { log: '', otel: '' };
  if (cfg.exportLogOut) {
    out.log = resolve(cfg.cwd, cfg.exportLogOut);
    appendDecisionLog(out.log, exported);
  }
  if (cfg.exportOtelOut) {
    out.otel = resolve(cfg.cwd, cfg.exportOtelOut);
    appendOtelLog(out.otel, exported);
  }
  return out;
}

interface OutputParts {
  adapter: string;
  runId: string;
  jobId: string;
  phase: string;
  sessionId: string;
  toolName: string;
  state: { verdict: Verdict; reasonCodes: string[]; violations: string[] };
  policy: LoadedPolicy;
  matchedRuleIds: string[];
  intentDigest: string;
  decisionLatencyMs: number;
  traceId: string;
  tracePath: string;
  runpackPath: string;
  packPath: string;
  packId: string;
  logExport: string;
  otelExport: string;
  killSwitch: JsonObject | undefined;
  mcpTrust: JsonObject | undefined;
  warnings: string[];
  relationship: JsonObject | undefined;
  resultEnvelope: JsonObject | undefined;
}

/** §6.4 in the reference's struct order; Go omitempty drops empty fields (`ok`, `executed`, `verdict` stay). */
function decisionOutput(p: OutputParts): JsonObject {
  const out: JsonObject = { ok: true, executed: false };
  const put = (key: string, value: JsonValue | undefined) => {
    if (!isGoEmpty(value)) out[key] = value!;
  };
  put('adapter', p.adapter);
  put('run_id', p.runId);
  put('job_id', p.jobId);
  put('phase', p.phase);
  put('session_id', p.sessionId);
  put('tool_name', p.toolName);
  out['verdict'] = p.state.verdict;
  put('reason_codes', p.state.reasonCodes);
  put('violations', p.state.violations);
  put('policy_digest', p.policy.digest);
  put('policy_id', p.policy.policy.schema_id);
  put('policy_version', p.policy.policy.schema_version);
  put('matched_rule_ids', p.matchedRuleIds);
  put('intent_digest', p.intentDigest);
  put('decision_latency_ms', p.decisionLatencyMs);
  put('trace_id', p.traceId);
  put('trace_path', p.tracePath);
  put('runpack_path', p.runpackPath);
  put('pack_path', p.packPath);
  put('pack_id', p.packId);
  put('log_export', p.logExport);
  put('otel_export', p.otelExport);
  put('kill_switch', p.killSwitch);
  put('mcp_trust', p.mcpTrust);
  put('warnings', p.warnings);
  put('relationship', p.relationship);
  put('result_envelope', p.resultEnvelope);
  return out;
}

/** Step 2: the boundary envelope, or (serve with `--allow-client-artifact-paths` only) the call's own path. */
function bindEnvelope(cfg: DecisionServiceConfig, call: ToolCall): ContextEnvelope | undefined {
  const clientPath = call.context.context_envelope_path.trim();
  if (clientPath === '') return cfg.contextEnvelope;
  if (!cfg.serve || !cfg.allowClientArtifactPaths) {
    throw new WardError(ERROR_CODES.USAGE, 'call.context.context_envelope_path is not supported; use --context-envelope at the boundary', {
      hint: 'pass the envelope with --context-envelope when starting ward (it is verified once and bound to every call)',
    });
  }
  if (cfg.contextEnvelope) {
    throw new WardError(ERROR_CODES.USAGE, 'call.context.context_envelope_path is not supported when --context-envelope is configured', {
      hint: 'drop call.context.context_envelope_path: the server binds its own envelope to every call',
    });
  }
  const path = checkedLocalPath(clientPath, 'call.context.context_envelope_path');
  let text: string;
  try {
    text = readFileSync(resolve(cfg.cwd, path), 'utf8');
  } catch (err) {
    throw new WardError(ERROR_CODES.USAGE, `read context envelope ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return parseContextEnvelope(text);
}

/** Paths must be absolute or local-relative without `..` and not URLs (§6.6). */
export function checkedLocalPath(path: string, what: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) throw new WardError(ERROR_CODES.USAGE, `${what} must be a local filesystem path`);
  if (!isAbsolute(path) && path.split(/[\\/]+/).includes('..')) {
    throw new WardError(ERROR_CODES.USAGE, `${what} must not traverse parent directories`);
  }
  return path;
}

/** Step 3: the kill switch, fail-closed (`kill_switch_state_unavailable`) when required (oss-prod, high or critical risk). */
function loadServiceKillSwitch(cfg: DecisionServiceConfig, path: string, riskClass: string): KillSwitchInput {
  return loadKillSwitch(() => readFileSync(resolve(cfg.cwd, path), 'utf8'), { required: inputsRequired(cfg.profile, riskClass), path });
}

/** Step 8 normalization: `[^A-Za-z0-9_-]+` → `_`, trim `_`, prefix `run_`; "" stays "". */
export function normalizeRunId(value: string): string {
  const trimmed = value.trim();
  if (trimmed === '') return '';
  const cleaned = trimmed.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '');
  if (cleaned === '') return '';
  return cleaned.startsWith('run_') ? cleaned : `run_${cleaned}`;
}

/** `yyyymmddThhmmss.nnnnnnnnn` in UTC, as the reference names traces. */
export function traceTimestamp(t: GoTime): string {
  const d = new Date(t.sec * 1000);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}T${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}.${p(t.nsec, 9)}`;
}

/** Step 6 path: an explicit path is written there (replaced); otherwise a new `trace_<run>_<ts>.json`, never overwritten. */
function decisionTraceTarget(cfg: DecisionServiceConfig, trace: SignedTrace, traceOut: string | undefined, runIdFlag: string): PendingDecisionResult['target'] {
  if (traceOut) return { path: checkedTracePath(traceOut, cfg.cwd) };
  const base = `trace_${normalizeRunId(runIdFlag)}_${traceTimestamp(toUTC(parseRFC3339(String(trace['observed_at']))))}`;
  return { dir: resolve(cfg.cwd, cfg.traceDir), names: [`${base}.json`, `${base}_${String(trace['event_id'])}.json`] };
}

/** The synchronous write (fsynced file and directory) of the one-shot commands. */
function writeDecisionTrace(pending: PendingDecisionResult): string {
  const text = traceFileText(pending.trace);
  const t = pending.target;
  if ('path' in t) {
    writeFileAtomic(t.path, text, 0o600);
    return t.path;
  }
  return createUniqueFile(t.dir, t.names, text, 0o600);
}

/**
 * Asynchronous trace writes for the servers: named files go through a `FileTraceSink` per trace
 * directory (written and fsynced off the main thread, the directory fsync shared by concurrent
 * writes); an explicit client path is replaced atomically (temporary file, datasync, rename,
 * directory fsync), also without blocking the event loop.
 */
export class DecisionTraceWriter {
  private readonly sinks = new Map<string, FileTraceSink>();
  private readonly inFlight = new InFlight();

  /**
   * `commit`: where the host's evidence must also be before the answer — a cluster replica
   * commits each trace to PostgreSQL while its file is written, so an answered decision is in the
   * shared store even if this machine is lost (docs/cluster.md). The file stays the contract's
   * `trace_path`; its later ingestion finds the same bytes stored (a duplicate, nothing written).
   */
  constructor(private readonly commit?: (trace: SignedTrace) => Promise<unknown>) {}

  write(pending: PendingDecisionResult): Promise<string> {
    const t = pending.target;
    let work: Promise<string>;
    if ('path' in t) work = writeFileAtomicAsync(t.path, traceFileText(pending.trace)).then(() => t.path);
    else {
      let sink = this.sinks.get(t.dir);
      if (!sink) {
        sink = new FileTraceSink(t.dir);
        this.sinks.set(t.dir, sink);
      }
      work = sink.write(pending.trace, undefined, t.names);
    }
    // Both must succeed before the answer; neither waits for the other.
    if (this.commit) work = Promise.all([work, this.commit(pending.trace)]).then(([location]) => location);
    return this.inFlight.track(work);
  }

  /** Wait for the writes in flight. */
  async close(): Promise<void> {
    await this.inFlight.settled();
    await Promise.all([...this.sinks.values()].map((s) => s.close()));
  }
}

const AUTO_PACK_NAME = '\u0000auto';

function runpackPath(cfg: DecisionServiceConfig, req: DecisionRequest, runId: string): string | undefined {
  if (req.runpackOut) return resolve(cfg.cwd, checkedLocalPath(req.runpackOut, 'runpack output path'));
  if (req.emitRunpack) {
    if (!cfg.runpackDir) throw new WardError(ERROR_CODES.USAGE, 'emit_runpack requires --runpack-dir', { hint: 'start ward mcp serve with --runpack-dir DIR' });
    return join(resolve(cfg.cwd, cfg.runpackDir), `runpack_${runId}.zip`);
  }
  return undefined;
}

function packPath(cfg: DecisionServiceConfig, req: DecisionRequest, _runId: string, intent: NormalizedIntent): string | undefined {
  if (req.packOut) return resolve(cfg.cwd, checkedLocalPath(req.packOut, 'pack output path'));
  if (req.emitPack) {
    if (!cfg.packDir) throw new WardError(ERROR_CODES.USAGE, 'emit_pack requires --pack-dir', { hint: 'start ward mcp serve with --pack-dir DIR' });
    return AUTO_PACK_NAME;
  }
  if (cfg.serve && cfg.packDir && isStateChanging(intent.tool_name, intent.targets.map((t) => t.operation))) return AUTO_PACK_NAME;
  return undefined;
}

function spoolQuietly(cfg: DecisionServiceConfig, kind: 'runpack' | 'pack', bytes: Buffer, warnings: string[]): void {
  try {
    spoolBytes(cfg.stateDir, kind, bytes);
  } catch (err) {
    warnings.push(`${kind} not spooled for the store: ${(err as Error).message}`);
  }
}
