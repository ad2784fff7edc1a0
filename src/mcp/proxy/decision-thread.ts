import { Worker } from 'node:worker_threads';
import { WorkerRpc } from '../../edge/worker-rpc.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import type { LoadedPolicy } from '../../policy/types.js';
import type { CallDecisionConfig, DecideOptions, KillSwitchInput, SignedCallDecision } from './call-decision.js';
import type { CallInput } from './intent.js';

/**
 * Large calls decided off the event loop (docs/mcp-proxy.md "Limits"). Deciding a call is
 * synchronous CPU work — normalising the intent, digesting it (JCS + sha256), evaluating, signing:
 * about 10–20 ms for the worst call `--max-call-keys` / `--max-call-bytes` allow. On the one event
 * loop of `ward mcp proxy --listen` every other session waited that long; here a worker thread runs
 * the same function (`decideSignedCall`) over a copy of the same runtime, and the event loop only
 * copies the call there and the signed decision back (under 2 ms for the worst call).
 *
 * The worker is started on the first large call (a proxy that never gets one pays nothing) and
 * decides one call at a time, in the order they came. Every job has a deadline; a worker that
 * misses it or dies fails its calls (nothing is decided, so nothing is forwarded) and the next
 * large call starts a new one.
 */

/** What one off-loop decision needs besides the runtime the thread was built with. */
export interface DecisionJob {
  call: CallInput;
  correlationId: string;
  opts: DecideOptions;
  killSwitch: KillSwitchInput;
}

/** A call as the worker receives it (with the id its reply carries: `RpcCall<ToWorker>`). */
export type ToWorker = { job: DecisionJob; policy?: LoadedPolicy | undefined };

/** Default deadline of one off-loop decision, from the moment it is handed to the thread. */
const DECISION_THREAD_TIMEOUT_MS = 30_000;

/** The thread could not answer (it died or missed its deadline): the call was not decided. */
export class DecisionThreadError extends WardError {
  constructor(message: string) {
    super(ERROR_CODES.INTERNAL, message);
  }
}

export interface DecisionThreadOptions {
  /** Per-job deadline (default `DECISION_THREAD_TIMEOUT_MS`). */
  timeoutMs?: number | undefined;
  /** The worker module (default: decision-worker.js beside this file). */
  workerUrl?: URL | undefined;
}

export class DecisionThread {
  /** The current worker; a dead one is replaced by the next call. */
  private rpc: WorkerRpc<ToWorker> | undefined;
  /** The policy digest the current worker decides with. */
  private workerPolicy = '';
  private closed = false;

  constructor(
    private readonly cfg: CallDecisionConfig,
    private readonly opts: DecisionThreadOptions = {},
  ) {}

  /** Jobs handed to the thread and not answered yet. */
  get inFlight(): number {
    return this.rpc?.inFlight ?? 0;
  }

  /**
   * Decide `job` with `policy` (the runtime's policy as of now: a reloaded policy is sent along
   * with the first job that needs it). Resolves with what `decideSignedCall` returns there; rejects
   * with the error it threw (revived: a `WardError` keeps its code), or with `DecisionThreadError`.
   */
  decide(policy: LoadedPolicy, job: DecisionJob): Promise<SignedCallDecision> {
    if (this.closed) return Promise.reject(new DecisionThreadError('the decision thread is closed'));
    let rpc: WorkerRpc<ToWorker>;
    try {
      rpc = this.started(policy);
    } catch (err) {
      return Promise.reject(new DecisionThreadError(`the decision thread could not start: ${(err as Error).message}`));
    }
    const msg: ToWorker = { job };
    if (policy.digest !== this.workerPolicy) {
      msg.policy = policy;
      this.workerPolicy = policy.digest;
    }
    return rpc.call<SignedCallDecision>(msg);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.rpc?.close();
  }

  private started(policy: LoadedPolicy): WorkerRpc<ToWorker> {
    if (this.rpc && !this.rpc.dead) return this.rpc;
    const url = this.opts.workerUrl ?? new URL('./decision-worker.js', import.meta.url);
    const cfg: CallDecisionConfig = { ...this.cfg, runtime: { ...this.cfg.runtime, policy } };
    const worker = new Worker(url, { workerData: cfg });
    worker.unref(); // the host's server keeps the process alive; a worker must not
    this.workerPolicy = policy.digest;
    // A worker that misses a deadline is wedged: it is ended with every job it held.
    this.rpc = new WorkerRpc<ToWorker>(worker, {
      name: 'the decision thread',
      timeoutMs: this.opts.timeoutMs ?? DECISION_THREAD_TIMEOUT_MS,
      onDeadline: 'worker',
      error: (message) => new DecisionThreadError(message),
    });
    return this.rpc;
  }
}
