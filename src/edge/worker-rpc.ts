import type { MessagePort, Worker } from 'node:worker_threads';
import { reviveError, serializeError, WardError, type SerializedError } from '../errors.js';

/**
 * Request and reply over a worker thread, for the hosts that move work off their event loop (the
 * daemon's store thread, the MCP proxy's decision thread). Every call has a deadline: a worker
 * that never answers must fail the call, not hold the request that waits on it. A worker that dies
 * (or errors, or is closed) fails every call it held, at once and for good: this object is done
 * then, and a host that wants another worker makes another `WorkerRpc`.
 */

/** A call as the worker receives it: the host's message with the id its reply must carry. */
export type RpcCall<M> = M & { id: number };
/** The worker's answer to one call: the value, or the error it threw (revived with its code). */
export type RpcReply<T = unknown> = { id: number; ok: true; value: T } | { id: number; ok: false; error: SerializedError };

/** Why a call got no answer: `late` past its deadline, `gone` when the worker died, was closed or could not take it. */
export type RpcFailure = 'late' | 'gone';

export interface WorkerRpcOptions {
  /** For messages: "the decision thread", "the store thread". */
  name: string;
  /** Default deadline of one call (ms), from the moment it is handed to the worker. */
  timeoutMs: number;
  /**
   * What a missed deadline means: `call`, that call alone fails (the worker may be slow on it
   * and go on with the others); `worker`, the worker is wedged and is ended with every call it holds.
   */
  onDeadline: 'call' | 'worker';
  /** The host's typed error for a call that got no answer (its code is the host's contract). */
  error: (message: string, why: RpcFailure, cause?: unknown) => WardError;
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export class WorkerRpc<M extends object> {
  private readonly pending = new Map<number, Pending>();
  private next = 0;
  private failed: WardError | undefined;

  constructor(
    private readonly worker: Worker,
    private readonly opts: WorkerRpcOptions,
  ) {
    worker.on('message', (msg: RpcReply) => {
      if (typeof msg?.id !== 'number') return;
      const p = this.settle(msg.id);
      if (!p) return;
      if (msg.ok) p.resolve(msg.value);
      else p.reject(reviveError(msg.error));
    });
    worker.on('error', (err) => this.fail(opts.error(`${opts.name} failed: ${err.message}`, 'gone', err)));
    worker.on('exit', (code) => this.fail(opts.error(`${opts.name} exited (${code})`, 'gone')));
  }

  /** Calls handed to the worker and not answered yet. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** Why this worker takes no more calls (it died, was closed or missed a deadline that ends it), if it does not. */
  get dead(): WardError | undefined {
    return this.failed;
  }

  /** Hand `msg` to the worker; resolves with its reply's value, rejects with its error or with the host's `error`. */
  call<T>(msg: M, timeoutMs = this.opts.timeoutMs): Promise<T> {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        const late = this.opts.error(`${this.opts.name} did not answer within ${timeoutMs} ms`, 'late');
        if (this.opts.onDeadline === 'worker') this.fail(late);
        else this.settle(id)?.reject(late);
      }, timeoutMs);
      timer.unref();
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      try {
        this.worker.postMessage({ ...msg, id } satisfies RpcCall<M>);
      } catch (err) {
        this.settle(id)?.reject(this.opts.error(`the call could not be handed to ${this.opts.name}: ${(err as Error).message}`, 'gone', err));
      }
    });
  }

  /** End the worker: every pending call fails with `${name} is closed`, and so does every later one. */
  close(): Promise<void> {
    this.fail(this.opts.error(`${this.opts.name} is closed`, 'gone'));
    return this.worker.terminate().then(
      () => undefined,
      () => undefined,
    );
  }

  private settle(id: number): Pending | undefined {
    const p = this.pending.get(id);
    if (!p) return undefined;
    this.pending.delete(id);
    clearTimeout(p.timer);
    return p;
  }

  /** The worker is gone or wedged: every call it held fails, and so does every later one. */
  private fail(err: WardError): void {
    if (this.failed) return;
    this.failed = err;
    for (const id of [...this.pending.keys()]) this.settle(id)!.reject(err);
    void this.worker.terminate().catch(() => undefined);
  }
}

/**
 * The worker side: answer each call on `port` with what `handle` returns (or throws), under the
 * call's id. A value that cannot be copied back fails that call, not the worker.
 */
export function answerCalls<M extends object>(port: MessagePort, handle: (msg: RpcCall<M>) => unknown): void {
  const reply = (msg: RpcReply) => {
    try {
      port.postMessage(msg);
    } catch (err) {
      port.postMessage({ id: msg.id, ok: false, error: serializeError(err) } satisfies RpcReply);
    }
  };
  port.on('message', (msg: RpcCall<M>) => {
    let value: unknown;
    try {
      value = handle(msg);
    } catch (err) {
      return reply({ id: msg.id, ok: false, error: serializeError(err) });
    }
    if (!(value instanceof Promise)) return reply({ id: msg.id, ok: true, value });
    value.then(
      (v: unknown) => reply({ id: msg.id, ok: true, value: v }),
      (err: unknown) => reply({ id: msg.id, ok: false, error: serializeError(err) }),
    );
  });
}
