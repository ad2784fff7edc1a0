import { Worker } from 'node:worker_threads';
import { ERROR_CODES, reviveError, WardError, type SerializedError } from '../../errors.js';
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

/** Messages to the worker. */
export type ToWorker = { id: number; job: DecisionJob; policy?: LoadedPolicy | undefined };
/** Messages from the worker. */
export type FromWorker = { id: number; ok: true; value: SignedCallDecision } | { id: number; ok: false; error: SerializedError };

/** Default deadline of one off-loop decision, from the moment it is handed to the thread. */
export const DECISION_THREAD_TIMEOUT_MS = 30_000;

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

interface Job {
  resolve: (v: SignedCallDecision) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export class DecisionThread {
  private worker: Worker | undefined;
  /** The policy digest the current worker decides with. */
  private workerPolicy = '';
  private readonly jobs = new Map<number, Job>();
  private next = 0;
  private closed = false;

  constructor(
    private readonly cfg: CallDecisionConfig,
    private readonly opts: DecisionThreadOptions = {},
  ) {}

  /** Jobs handed to the thread and not answered yet. */
  get inFlight(): number {
    return this.jobs.size;
  }

  /**
   * Decide `job` with `policy` (the runtime's policy as of now: a reloaded policy is sent along
   * with the first job that needs it). Resolves with what `decideSignedCall` returns there; rejects
   * with the error it threw (revived: a `WardError` keeps its code), or with `DecisionThreadError`.
   */
  decide(policy: LoadedPolicy, job: DecisionJob): Promise<SignedCallDecision> {
    if (this.closed) return Promise.reject(new DecisionThreadError('the decision thread is closed'));
    let worker: Worker;
    try {
      worker = this.started(policy);
    } catch (err) {
      return Promise.reject(new DecisionThreadError(`the decision thread could not start: ${(err as Error).message}`));
    }
    const id = this.next++;
    const msg: ToWorker = { id, job };
    if (policy.digest !== this.workerPolicy) {
      msg.policy = policy;
      this.workerPolicy = policy.digest;
    }
    return new Promise<SignedCallDecision>((resolve, reject) => {
      const ms = this.opts.timeoutMs ?? DECISION_THREAD_TIMEOUT_MS;
      const timer = setTimeout(() => this.fail(worker, new DecisionThreadError(`the decision thread did not answer within ${ms} ms`)), ms);
      timer.unref();
      this.jobs.set(id, { resolve, reject, timer });
      try {
        worker.postMessage(msg);
      } catch (err) {
        // A call that cannot be copied (it came from JSON, so it always can): not decided.
        this.settle(id)?.reject(new DecisionThreadError(`the call could not be handed to the decision thread: ${(err as Error).message}`));
      }
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const w = this.worker;
    if (w) this.fail(w, new DecisionThreadError('the decision thread is closed'));
  }

  private started(policy: LoadedPolicy): Worker {
    if (this.worker) return this.worker;
    const url = this.opts.workerUrl ?? new URL('./decision-worker.js', import.meta.url);
    const cfg: CallDecisionConfig = { ...this.cfg, runtime: { ...this.cfg.runtime, policy } };
    const worker = new Worker(url, { workerData: cfg });
    worker.unref(); // the host's server keeps the process alive; a worker must not
    this.workerPolicy = policy.digest;
    worker.on('message', (msg: FromWorker) => {
      const job = this.settle(msg.id);
      if (!job) return;
      if (msg.ok) job.resolve(msg.value);
      else job.reject(reviveError(msg.error));
    });
    worker.on('error', (err) => this.fail(worker, new DecisionThreadError(`the decision thread failed: ${err.message}`)));
    worker.on('exit', (code) => this.fail(worker, new DecisionThreadError(`the decision thread exited (${code})`)));
    this.worker = worker;
    return worker;
  }

  private settle(id: number): Job | undefined {
    const job = this.jobs.get(id);
    if (!job) return undefined;
    this.jobs.delete(id);
    clearTimeout(job.timer);
    return job;
  }

  /** The worker is gone or wedged: every job it held fails, and the next call starts a new one. */
  private fail(worker: Worker, err: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    for (const id of [...this.jobs.keys()]) this.settle(id)!.reject(err);
    void worker.terminate().catch(() => undefined);
  }
}
