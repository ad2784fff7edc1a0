import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { approvalCommand, approvalTokenPath, type ApprovalSigner } from '../decision/approval-command.js';
import { approvalTokensInDir, waitForApprovalToken } from '../decision/approval-dir.js';
import type { ApprovalRequest } from './approval-request.js';
import { approvalStep } from '../decision/token-steps.js';
import { approvalLedgerOf, gateEvalSteps, steps, type ApprovalTokens } from '../decision/steps.js';
import { signResultDecision } from '../decision/result-decision.js';
import { screenResult } from '../mcp/proxy/result-firewall.js';
import { SdkWitness, type WardObservedResult } from './witness.js';
import { resolveStateDir, type StateDirResolution } from '../state/state-dir.js';
import { approvalCallOf, readTokenFile, requiredApprovalScope, type ParsedToken } from '../tokens/index.js';
import { delegationDigest } from '../intent/digest.js';
import { formatRFC3339Nano, isJsonObject, nowUTC, parseJsonText, parseRFC3339, parseStrictJson, type GoTime, type JsonObject, type JsonValue } from '../canon/index.js';
import { parseContextEnvelope } from '../context/index.js';
import { EXIT, type ExitCode } from '../contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { readPrivateKeyFile, resolveSigningKey, type SigningKey } from '../keys/index.js';
import { loadPolicyFile, parsePolicyYaml } from '../policy/load.js';
import type { LoadedPolicy, Verdict } from '../policy/types.js';
import { captureFileName, captureFileText, traceFileText, writeCapture, writeTrace, type SignedTrace, type TraceFormat } from '../trace/index.js';
import { resolveIntentHosts } from '../decision/host-resolution.js';
import { decideGate, type GateRequest, type GateResultOutput, type GateRuntime, type PendingDecision } from '../decision/gate-run.js';
import { FileTraceSink, writeJournaledNow } from '../decision/trace-sink.js';
import { JournalTraceSink, recoverJournals } from '../mcp/proxy/journal-sink.js';
import { WardBlockedError } from './errors.js';
import { applicationSpans, preciseNow, type ApplicationSpans } from '../telemetry/telemetry.js';
import { gateDecisionRecord } from '../telemetry/gate-record.js';
import type { IntentRequest } from './intent.js';

/**
 * When `evaluate` resolves, as the MCP proxy's `--trace-sync`:
 * - `write` (default): the signed trace file is written to the operating system (not fsynced). It
 *   survives a crash or kill -9 of the agent, not a power loss or kernel crash before the OS writes
 *   it back.
 * - `fsync`: the trace is on disk: it survives a power loss. Concurrent calls share one
 *   synchronized journal write (group commit, the proxy's journal); the trace file is there too
 *   when `evaluate` resolves, and is rebuilt from the journal after a power loss.
 */
export type WardDurability = 'write' | 'fsync';

export interface WardOptions {
  /** A policy file path, policy YAML text, or a policy already loaded with `parsePolicyYaml`/`loadPolicyFile`. */
  policy: string | LoadedPolicy;
  /**
   * Ward's state directory (keys, traces, the token ledger, rate-limit counters); `~` is expanded.
   * Default, as for the CLI: `$WARD_STATE_DIR`, else the nearest existing `.ward/` upwards from
   * `cwd`, else `.ward/` beside the policy file, else the per-user directory
   * (`$XDG_STATE_HOME/ward` or `~/.local/state/ward`). `ward.state` says which and why.
   */
  stateDir?: string;
  /**
   * Where approval tokens for this Ward's calls are dropped (`ward approve --out <dir>/…`, the
   * command `decision.approval.command` prints) and picked up by the next identical call.
   * Default `<stateDir>/approvals`; `false` reads no directory (only `approvalTokens`).
   */
  approvalDir?: string | false;
  /** The trace signing key, or a private key file (mode 0600). Default: Ward's persistent key in `<stateDir>/keys`. */
  signingKey?: SigningKey | string;
  /** Where signed traces are written. Default `<stateDir>/traces`. */
  traceDir?: string;
  /** Rate-limit and destructive-budget counters. Default `<stateDir>/gate_rate_limits.json`. */
  rateLimitStatePath?: string;
  /**
   * Write a decision capture (`ward.decision_capture`: the normalized intent and any envelope)
   * next to each trace, so `ward regress replay` can re-run real traffic against a new policy.
   * Off by default: captures contain tool arguments (docs/gate.md, "Decision captures").
   */
  captureIntents?: boolean;
  traceFormat?: TraceFormat;
  /** What a trace survives once `evaluate` resolves: `write` (default, a crash of the agent) or `fsync` (a power loss). */
  durability?: WardDurability;
  /** Relative paths resolve against this directory. Default `process.cwd()`. */
  cwd?: string;
  /**
   * Witness the results the host passes back with `observeResult` (docs/sdk.md "Results the host
   * saw"): an argument that carries a value an earlier result returned is `tool_output` whatever
   * the intent declares. Default true; `false` keeps the declared provenance, as before.
   */
  witness?: boolean;
  /**
   * Record each decision as a span (`ward.decide <tool>`, the attributes of docs/observability.md)
   * on the application's OpenTelemetry tracer provider, as a child of the active span — the
   * agent's tool call. Ward exports nothing itself: the application's SDK does. Off by default
   * (then no OpenTelemetry module is loaded).
   */
  otel?: boolean;
}

export interface WardEvaluateOptions {
  /** The evaluation clock (RFC 3339 text or a GoTime); the wall clock otherwise. */
  evaluationTime?: string | GoTime;
  /** A ContextSpec v1 envelope (JSON text or object) bound to the intent. */
  contextEnvelope?: string | JsonObject;
  /** Non-enforcing: report what would have happened; the verdict becomes allow. */
  simulate?: boolean;
  correlationId?: string;
  /** Write the trace to this exact file instead of `traceDir`. */
  traceOut?: string;
  /**
   * Approval tokens to present for this call, as token objects or token file paths (relative to
   * `cwd`): the `--approval-token`/`--approval-token-chain` of `ward gate eval`. Checked exactly as
   * the gate checks them (signature with this Ward's signing key, digests, scope, expiry, one use).
   * Tokens in the approval directory for this intent are presented too.
   */
  approvalTokens?: readonly (JsonObject | string)[];
  /** This call's durability, instead of the Ward's (`durability` option, default `write`). */
  durability?: WardDurability;
}

export type { ApprovalRequest } from './approval-request.js';
export type { WardObservedResult } from './witness.js';

export interface GuardToolOptions<A extends unknown[]> {
  /**
   * Called when a call needs approval, with the request and the call's arguments (as an array). Resolve with
   * tokens (objects or file paths) or `true` (a token is now in the approval directory, e.g. after
   * `await request.waitForToken()`) to decide the call again — it runs if that is `allow`; resolve
   * with `false`/`undefined` to refuse it (`WardBlockedError`, verdict `require_approval`).
   */
  onApprovalRequired?: (request: ApprovalRequest, args: Readonly<A>) => Promise<ApprovalAnswer> | ApprovalAnswer;
}

export type ApprovalAnswer = boolean | undefined | JsonObject | string | readonly (JsonObject | string)[];

/** One decision, with its signed trace already written. */
export interface WardDecision {
  verdict: Verdict;
  /** True only for `allow` (a `dry_run` is not permission to run). */
  allowed: boolean;
  reasonCodes: string[];
  violations: string[];
  /** Comma-joined names of the deciding rules ("" when the default verdict applied). */
  matchedRule: string;
  toolName: string;
  traceId: string;
  tracePath: string;
  intentDigest: string;
  policyDigest: string;
  /** What `ward gate eval` would exit with. */
  exitCode: ExitCode;
  /** The exact `ward gate eval --json` object (without correlation_id). */
  output: JsonObject;
  /** The decision capture file, when `captureIntents` is on. */
  capturePath?: string;
  /** On `require_approval`: how to get the approval (`command`, `waitForToken()`). */
  approval?: ApprovalRequest;
}

/** A tool function: anything async (or sync) taking arguments. */
export type ToolFunction<A extends unknown[], R> = (...args: A) => R | Promise<R>;
/**
 * Describes the call about to happen as an intent request: an `intent(...)` build, an intent JSON
 * object, or its JSON text (parsed strictly, as `ward.evaluate` does).
 */
export type DescribeIntent<A extends unknown[]> = (...args: A) => IntentRequest | JsonObject | string | Promise<IntentRequest | JsonObject | string>;

/**
 * Ward as a library: load a policy and a signing key once, then decide tool calls. Every decision
 * goes through the same gate as `ward gate eval` (rate limits, approvals, simulate) and returns
 * only after its signed trace is written (`durability`: to the operating system, or to disk).
 */
export class Ward {
  readonly policy: LoadedPolicy;
  readonly stateDir: string;
  /** How `stateDir` was chosen: `flag` (the `stateDir` option), `env`, `found`, `policy` or `user`, and why. */
  readonly state: StateDirResolution;
  readonly traceDir: string;
  /** Where approval tokens are picked up (undefined with `approvalDir: false`). */
  readonly approvalDir: string | undefined;
  readonly #runtime: GateRuntime;
  readonly #cwd: string;
  readonly #signer: ApprovalSigner;
  /** The default for `evaluate`'s `durability`. */
  readonly durability: WardDurability;
  /** `write`: trace files published on the calling thread, no fsync. */
  #sink: FileTraceSink | undefined;
  /** `fsync`: the MCP proxy's group-committed journal, beside the trace directory. */
  #journal: JournalTraceSink | undefined;
  readonly #journalDir: string;
  /** Undefined with `witness: false`. */
  readonly #witness: SdkWitness | undefined;
  /** Keys the result firewall's finding digests (they never leave this Ward). */
  readonly #digestKey = randomBytes(32);
  /** The `otel` option: decisions as spans on the application's tracer provider (loaded on first use). */
  readonly #otel: boolean;
  #spans: ApplicationSpans | undefined;

  constructor(options: WardOptions) {
    if (!options || options.policy === undefined) {
      throw new WardError(ERROR_CODES.USAGE, 'new Ward() needs a policy', {
        hint: "new Ward({ policy: '.ward.yaml' }) — create one with: ward init",
      });
    }
    const cwd = options.cwd ?? process.cwd();
    this.#cwd = cwd;
    this.policy = loadPolicy(options.policy, cwd);
    this.state = resolveStateDir({
      cwd,
      env: process.env,
      explicit: options.stateDir,
      explicitName: 'stateDir',
      policyPath: typeof options.policy === 'string' && isPolicyPath(options.policy, cwd) ? options.policy : undefined,
    });
    this.stateDir = this.state.dir;
    this.traceDir = resolve(cwd, options.traceDir ?? resolve(this.stateDir, 'traces'));
    this.approvalDir = options.approvalDir === false ? undefined : resolve(cwd, options.approvalDir ?? resolve(this.stateDir, 'approvals'));
    this.durability = durabilityOf(options.durability, 'durability');
    this.#journalDir = `${this.traceDir}.journal`;
    // Traces journaled by an `fsync` Ward whose process died are rebuilt as files before anything else.
    if (existsSync(this.#journalDir)) recoverJournals(this.traceDir, this.#journalDir);
    const signingKey = signingKeyOf(options.signingKey, this.stateDir, cwd);
    this.#signer =
      typeof options.signingKey === 'string'
        ? { privateKeyPath: resolve(cwd, options.signingKey) }
        : options.signingKey
          ? { approverKey: true }
          : { stateDir: this.stateDir };
    this.#runtime = {
      policy: this.policy,
      signingKey,
      traceFormat: options.traceFormat ?? 'ward',
      pathResolution: 'filesystem',
      traceDir: this.traceDir,
      rateLimitStatePath: resolve(cwd, options.rateLimitStatePath ?? resolve(this.stateDir, 'gate_rate_limits.json')),
      profile: 'standard',
      captureIntents: options.captureIntents === true,
    };
    this.#witness = options.witness === false ? undefined : new SdkWitness();
    this.#otel = options.otel === true;
    // `fsync`: the journal is preallocated now (in the background), once nothing else can throw, rather than on the first call.
    if (this.durability === 'fsync') this.#journal = new JournalTraceSink(this.traceDir, this.#journalDir, 'fsync');
  }

  /**
   * Decide one intent: an `intent(...)` build, any intent request JSON object, or its JSON text
   * (parsed strictly: invalid JSON or a key repeated in one object rejects with `ERR_INTENT_PARSE`).
   */
  async evaluate(intent: IntentRequest | JsonObject | string, options: WardEvaluateOptions = {}): Promise<WardDecision> {
    const startedAt = preciseNow();
    const given0 = typeof intent === 'string' ? parseIntentJson(intent) : (intent as JsonObject);
    // What Ward saw in earlier results counts over what the intent declares about its arguments.
    const witnessed: { intent: JsonValue; related?: string[] | undefined } = this.#witness && isJsonObject(given0) ? this.#witness.provenance(given0) : { intent: given0 };
    const request: GateRequest = { intent: witnessed.intent };
    const witnessedCodes: string[] = [];
    if (witnessed.related) {
      request.relationshipExtras = { related_record_ids: witnessed.related };
      witnessedCodes.push('arg_provenance_witnessed');
    }
    if (options.evaluationTime !== undefined) {
      request.evaluationTime = typeof options.evaluationTime === 'string' ? parseRFC3339(options.evaluationTime) : options.evaluationTime;
    }
    if (options.contextEnvelope !== undefined) {
      const json = typeof options.contextEnvelope === 'string' ? parseEnvelopeJson(options.contextEnvelope) : options.contextEnvelope;
      request.contextEnvelope = parseContextEnvelope(JSON.stringify(json));
      request.contextEnvelopeJson = json;
    } else if (this.#witness && isJsonObject(witnessed.intent)) {
      // No envelope given: the session's witnessed one, when a rule that could match reads context.
      const tool = typeof witnessed.intent['tool_name'] === 'string' ? witnessed.intent['tool_name'] : '';
      const envelope = this.#witness.witness(this.#witness.sessionOf(witnessed.intent)).contextFor(this.policy.policy, tool);
      if (envelope) {
        request.contextEnvelope = envelope;
        request.contextSourceLabel = 'witnessed';
        witnessedCodes.push('context_evidence_witnessed');
      }
    }
    if (options.correlationId) request.correlationId = options.correlationId;
    if (options.traceOut) request.traceOut = options.traceOut;
    // The gate's own approval step (signature, digests, scope, expiry, one use via the ledger),
    // given the tokens passed in and those in the approval directory for this intent.
    let scope: string[] | undefined;
    let binding: string | undefined;
    let callDigest: string | undefined;
    const given = options.approvalTokens ?? [];
    const approvals: ApprovalTokens = (t) => {
      scope = requiredApprovalScope(t.intent);
      binding = t.intent.delegation ? delegationDigest(t.intent.delegation) : undefined;
      // The same call under another run or session id finds an approval that binds the call (docs/approvals.md "Call or session").
      const call = approvalCallOf(t.intent).callDigest;
      callDigest = t.approvalSessionBound ? undefined : call;
      return approvalStep({
        tokens: () => [
          ...given.map((token, i) => this.#tokenOf(token, i)),
          ...(this.approvalDir ? approvalTokensInDir(this.approvalDir, t.intentDigest, call) : []),
        ],
        verifyKeys: [this.#runtime.signingKey],
        audit: { dir: resolve(this.stateDir, 'audits') },
      })(t);
    };
    // §3.6 steps 4–10; no delegation tokens are taken, so a required delegation is missing.
    request.steps = gateEvalSteps(this.#runtime, { approvals }, { simulate: Boolean(options.simulate) });
    if (witnessedCodes.length) request.steps = [...request.steps, steps.witnessed(witnessedCodes)];
    const durability = options.durability === undefined ? this.durability : durabilityOf(options.durability, 'evaluate durability');
    request.resolvedHosts = await resolveIntentHosts(this.policy.policy, [request.intent]);
    const pending = decideGate(this.#runtime, request);
    let r: GateResultOutput;
    if (options.traceOut) {
      r = pending.finish(writeTrace(pending.trace, { dir: this.traceDir, path: options.traceOut }));
      if (pending.capture) writeCapture(this.traceDir, pending.capture);
    } else if (durability === 'fsync') {
      r = pending.finish(await this.#writeSynced(pending));
    } else {
      // Published on this thread (temporary name, link), no fsync: a few system calls.
      this.#sink ??= new FileTraceSink(this.traceDir, { sync: 'write' });
      r = pending.finish(await this.#sink.write(pending.trace, pending.capture));
    }
    const out = r.output;
    if (this.#otel) {
      // The span is recorded before the caller gets the decision, in the caller's active context.
      this.#spans ??= await applicationSpans();
      this.#spans.decision(gateDecisionRecord(out, witnessed.intent, 'evaluate', options.correlationId ?? String(r.trace['event_id'] ?? ''), false, 'sdk'), startedAt);
    }
    if (this.#witness && out['verdict'] === 'allow' && isJsonObject(witnessed.intent)) this.#witness.allowed(String(out['trace_id']), witnessed.intent);
    return {
      verdict: out['verdict'] as Verdict,
      allowed: out['verdict'] === 'allow',
      reasonCodes: [...(out['reason_codes'] as string[])],
      violations: [...(out['violations'] as string[])],
      matchedRule: String(out['matched_rule'] ?? ''),
      toolName: String(r.trace['tool_name'] ?? ''),
      traceId: String(out['trace_id']),
      tracePath: r.tracePath,
      intentDigest: r.intentDigest,
      policyDigest: this.policy.digest,
      exitCode: r.exitCode,
      output: out,
      ...(pending.capture ? { capturePath: join(this.traceDir, captureFileName(pending.capture)) } : {}),
      ...(out['verdict'] === 'require_approval' && scope
        ? { approval: this.#approvalRequest(r.intentDigest, this.policy.digest, scope, binding, callDigest) }
        : {}),
    };
  }

  /**
   * Pass back the result of an allowed call (its decision, or the decision's `traceId`) before the
   * model sees it: the policy's `results` section screens it (pass, redact or block, the decision
   * signed as a trace linked to the call's), and the witness remembers what the model is given,
   * so a later argument carrying it is `tool_output`; a result of a tool the policy classes as
   * retrieval becomes witnessed context evidence. Give the model `result` of the answer, not the
   * original. A call this Ward did not allow, or whose result was already observed, is an error.
   */
  async observeResult(call: WardDecision | string, result: unknown): Promise<WardObservedResult> {
    const traceId = typeof call === 'string' ? call : call?.traceId;
    if (!this.#witness) {
      throw new WardError(ERROR_CODES.USAGE, 'observeResult needs the witness (this Ward was created with witness: false)');
    }
    const pending = typeof traceId === 'string' ? this.#witness.take(traceId) : undefined;
    if (!pending) {
      throw new WardError(ERROR_CODES.USAGE, `observeResult: no allowed call with trace id ${String(traceId)} is waiting for its result`, {
        hint: 'pass the decision of an allowed evaluate() (or its traceId), once per call',
      });
    }
    const { intent } = pending;
    const toolName = typeof intent['tool_name'] === 'string' ? intent['tool_name'] : '';
    let out: WardObservedResult = { action: 'pass', result, detectors: [], reasonCodes: [] };
    const results = this.policy.policy.results;
    if (results.enabled) {
      const screened = screenResult(result, results, this.#digestKey, formatRFC3339Nano(nowUTC()));
      const outcome = screened.outcome();
      const decided = signResultDecision(this.#runtime, {
        intent: {
          schema_id: 'gait.gate.intent_request',
          schema_version: '1.0.0',
          created_at: outcome.observedAt,
          producer_version: 'ward-sdk',
          tool_name: toolName,
          args: { call_trace_id: traceId!, ...outcome.facts },
          targets: [],
          arg_provenance: [{ arg_path: '$', source: 'tool_output', source_ref: traceId! }],
          context: isJsonObject(intent['context']) ? intent['context'] : {},
        },
        verdict: outcome.verdict,
        reasonCodes: outcome.reasonCodes,
        violations: outcome.violations,
        callTraceId: traceId!,
        correlationId: `${traceId!}/result`,
      });
      const tracePath = await this.#writeTrace(decided.trace);
      out = { action: screened.action, result: screened.delivered, detectors: screened.flagged, reasonCodes: screened.reasonCodes, traceId: String(decided.trace['trace_id']), tracePath };
    }
    const w = this.#witness.witness(pending.session);
    w.observe(traceId!, toolName, out.result);
    if (isJsonObject(out.result)) w.observeRetrieval(this.policy.policy, { intentToolName: toolName, server: 'sdk', toolName, args: intent['args'] ?? {}, result: out.result, traceId: traceId! });
    return out;
  }

  /** A signed trace written as `evaluate` writes its own (this Ward's durability). */
  async #writeTrace(trace: SignedTrace): Promise<string> {
    if (this.durability === 'fsync') {
      this.#journal ??= new JournalTraceSink(this.traceDir, this.#journalDir, 'fsync');
      const location = await this.#journal.write(trace, undefined);
      writeJournaledNow(location, traceFileText(trace));
      return location;
    }
    this.#sink ??= new FileTraceSink(this.traceDir, { sync: 'write' });
    return this.#sink.write(trace, undefined);
  }

  /**
   * Decide `intent` (a traced decision, like `evaluate`) and, when it needs approval, return how
   * to get it: the approve command and `waitForToken()`. Undefined when the call needs no approval
   * (allowed, blocked or dry run: `evaluate` says which).
   */
  async requestApproval(intent: IntentRequest | JsonObject | string, options: WardEvaluateOptions = {}): Promise<ApprovalRequest | undefined> {
    return (await this.evaluate(intent, options)).approval;
  }

  /** A token given as an object or a file path, read as `gate eval --approval-token` reads it. */
  #tokenOf(token: JsonObject | string, index: number): ParsedToken {
    if (typeof token === 'string') return readTokenFile(token, this.#cwd);
    if (token && typeof token === 'object' && !Array.isArray(token)) return { source: `approvalTokens[${index}]`, value: token };
    return { source: `approvalTokens[${index}]`, error: 'an approval token must be a token object or a file path' };
  }

  #approvalRequest(intentDigest: string, policyDigest: string, scope: string[], binding: string | undefined, callDigest: string | undefined): ApprovalRequest {
    const dir = this.approvalDir;
    const tokenPath = approvalTokenPath(dir ?? resolve(this.stateDir, 'approvals'), intentDigest);
    const ledger = approvalLedgerOf(this.#runtime);
    return {
      intentDigest,
      policyDigest,
      scope,
      command: approvalCommand({ intentDigest, policyDigest, scope, delegationBindingDigest: binding, callDigest, signer: this.#signer, out: tokenPath }),
      tokenPath,
      approvalDir: dir,
      waitForToken: (options) => {
        if (!dir) {
          return Promise.reject(
            new WardError(ERROR_CODES.USAGE, 'waitForToken needs an approval directory (this Ward was created with approvalDir: false)', {
              hint: 'pass the token to evaluate({ approvalTokens }) instead',
            }),
          );
        }
        return waitForApprovalToken(dir, { intentDigest, policyDigest }, ledger, options);
      },
    };
  }

  /**
   * `fsync`: the trace goes into the journal, and `evaluate` waits for the synchronized write that
   * covers it (one for every call in flight: group commit). The trace file is then published
   * at the journal's name for it, so it is there when `evaluate` resolves; the journal sink fsyncs
   * the files before it drops a journal, and rebuilds them from a journal left by a crash.
   */
  async #writeSynced(pending: PendingDecision): Promise<string> {
    this.#journal ??= new JournalTraceSink(this.traceDir, this.#journalDir, 'fsync');
    const location = await this.#journal.write(pending.trace, pending.capture);
    // Durable in the journal already: written straight to its name (a torn file is rewritten from the journal).
    writeJournaledNow(location, traceFileText(pending.trace));
    if (pending.capture) writeJournaledNow(join(this.traceDir, captureFileName(pending.capture)), captureFileText(pending.capture));
    return location;
  }

  /**
   * Wait for trace writes in flight (each `evaluate` already waits for its own); with `fsync`, sync
   * the trace files and drop the journal. Call it before the process exits: a journal left behind
   * is replayed by the next Ward on the same trace directory.
   */
  async close(): Promise<void> {
    const journal = this.#journal;
    this.#journal = undefined;
    await Promise.all([this.#sink?.close(), journal?.close()]);
  }

  /** Wrap `fn` so it runs only when Ward allows the call `describeIntent` describes. */
  guardTool<A extends unknown[], R>(
    fn: ToolFunction<A, R>,
    describeIntent: NoInfer<DescribeIntent<A>>,
    options?: GuardToolOptions<NoInfer<A>>,
  ): (...args: A) => Promise<R> {
    return guardTool(this, fn, describeIntent, options);
  }
}

/**
 * Wrap any tool function so it runs only on `allow`. Otherwise (block, require_approval, dry_run)
 * it throws `WardBlockedError` and the function is never called. An intent Ward cannot evaluate
 * throws its `WardError` and the function is not called either (fail closed).
 */
export function guardTool<A extends unknown[], R>(
  ward: Ward,
  fn: ToolFunction<A, R>,
  describeIntent: NoInfer<DescribeIntent<A>>,
  options: GuardToolOptions<NoInfer<A>> = {},
): (...args: A) => Promise<R> {
  return async (...args: A): Promise<R> => {
    const described = await describeIntent(...args);
    let decision = await ward.evaluate(described);
    if (decision.approval && options.onApprovalRequired) {
      const answer = await options.onApprovalRequired(decision.approval, args);
      if (answer !== undefined && answer !== false) {
        const tokens = answer === true ? [] : Array.isArray(answer) ? (answer as readonly (JsonObject | string)[]) : [answer as JsonObject | string];
        decision = await ward.evaluate(described, { approvalTokens: tokens });
      }
    }
    if (decision.verdict !== 'allow') {
      throw new WardBlockedError({
        verdict: decision.verdict,
        reasonCodes: decision.reasonCodes,
        violations: decision.violations,
        toolName: decision.toolName,
        traceId: decision.traceId,
        tracePath: decision.tracePath,
        intentDigest: decision.intentDigest,
        policyDigest: decision.policyDigest,
        ...(decision.approval ? { approval: decision.approval } : {}),
      });
    }
    return fn(...args);
  };
}

function durabilityOf(value: unknown, name: string): WardDurability {
  if (value === undefined) return 'write';
  if (value === 'write' || value === 'fsync') return value;
  throw new WardError(ERROR_CODES.USAGE, `${name} must be 'write' or 'fsync', not ${JSON.stringify(value)}`, {
    hint: "new Ward({ policy, durability: 'fsync' }) waits for the disk; 'write' for the operating system",
  });
}

/** Whether `policy` names a file (as `loadPolicy` decides), so the state directory may be found beside it. */
function isPolicyPath(policy: string, cwd: string): boolean {
  return !policy.includes('\n') && existsSync(resolve(cwd, policy));
}

/** A string is YAML when it spans lines or is not an existing file but reads like a mapping. */
function loadPolicy(policy: string | LoadedPolicy, cwd: string): LoadedPolicy {
  if (typeof policy !== 'string') {
    if (policy && typeof policy === 'object' && 'policy' in policy && 'digest' in policy) return policy;
    throw new WardError(ERROR_CODES.USAGE, 'policy must be a file path, policy YAML text or a loaded policy', {
      hint: "new Ward({ policy: '.ward.yaml' })",
    });
  }
  const path = resolve(cwd, policy);
  if (!policy.includes('\n') && (existsSync(path) || !/:\s|^\s*\{/.test(policy))) {
    if (!existsSync(path)) {
      throw new WardError(ERROR_CODES.IO, `policy file not found: ${path}`, {
        exitCode: EXIT.INVALID_INPUT,
        hint: 'create one with: ward init (or pass policy YAML text)',
      });
    }
    return loadPolicyFile(path);
  }
  return parsePolicyYaml(policy);
}

function signingKeyOf(key: SigningKey | string | undefined, stateDir: string, cwd: string): SigningKey {
  if (typeof key === 'string') return readPrivateKeyFile(resolve(cwd, key));
  if (key) return key;
  return resolveSigningKey({ mode: 'default', stateDir, env: process.env, cwd }).key;
}

/** Envelope JSON text to an object, as strictly as the envelope parser reads it. */
function parseEnvelopeJson(text: string): JsonObject {
  parseContextEnvelope(text); // size, duplicate keys, schema: the envelope's own errors first
  return parseJsonText(text) as JsonObject;
}

/** Intent JSON text, read as `ward gate eval --intent` reads its file (the gate then judges the value). */
function parseIntentJson(text: string): JsonValue {
  return parseStrictJson(text, ERROR_CODES.INTENT_PARSE, { prefix: 'parse intent json: ', syntaxPrefix: '' });
}
