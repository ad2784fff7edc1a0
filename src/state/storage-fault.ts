import { ERROR_CODES, WardError } from '../errors.js';

/**
 * A storage fault: the disk under Ward's journal, store or trace files is full (ENOSPC), over
 * quota (EDQUOT) or failing (EIO). It is a state the host is in, not an answer to one request:
 * the host refuses decisions with `ERR_STORAGE_FULL` (HTTP 503 + Retry-After, never "overload"),
 * reports not-ready, logs the cause once per episode, probes, and serves again by itself once a
 * probe write succeeds. docs/daemon.md "Disk full".
 */
export const STORAGE_FAULT_CODES = ['ENOSPC', 'EDQUOT', 'EIO'] as const;
export type StorageFaultCode = (typeof STORAGE_FAULT_CODES)[number];

/** LevelDB reports the errno only in its message ("IO error: …/000003.log: No space left on device"). */
const MESSAGES: readonly [RegExp, StorageFaultCode][] = [
  [/no space left on device/i, 'ENOSPC'],
  [/disk quota exceeded/i, 'EDQUOT'],
  [/input\/output error/i, 'EIO'],
];

/** The storage fault behind `err` (its errno, or a wrapped cause's), or undefined for any other error. */
export function storageFaultCode(err: unknown): StorageFaultCode | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof WardError && e.code === ERROR_CODES.STORAGE_FULL) return (e.details?.['errno'] as StorageFaultCode | undefined) ?? 'ENOSPC';
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && (STORAGE_FAULT_CODES as readonly string[]).includes(code)) return code as StorageFaultCode;
    const message = (e as Error).message;
    if (typeof message === 'string') for (const [re, c] of MESSAGES) if (re.test(message)) return c;
  }
  return undefined;
}

/** The error a refused decision carries while storage is faulted (503 + Retry-After). */
export function storageFullError(what: string, code: StorageFaultCode, cause?: unknown): WardError {
  return new WardError(ERROR_CODES.STORAGE_FULL, `${what}: ${describe(code)} (${code}); decisions are refused until a write succeeds again`, {
    cause,
    // `ward_error` names the condition on the wire (the envelope's `error_code` is the exit code's).
    details: { ward_error: ERROR_CODES.STORAGE_FULL, errno: code },
    hint: code === 'EIO' ? 'check the disk (dmesg); Ward serves again by itself once its writes succeed' : 'free space on the state directory\'s file system; Ward serves again by itself within seconds',
  });
}

function describe(code: StorageFaultCode): string {
  return code === 'ENOSPC' ? 'the disk is full' : code === 'EDQUOT' ? 'the disk quota is exhausted' : 'the disk reports an I/O error';
}

export interface StorageFaultState {
  /** Where it failed: `journal` (appending or preallocating), `ingest` (the store), `trace_file`. */
  source: string;
  code: StorageFaultCode;
  message: string;
  since: Date;
}

export interface StorageFaultEvents {
  /** Once per episode, when the first fault of it is seen. */
  onFault?(state: StorageFaultState): void;
  /** Once per episode, when it ends (`seconds` since it began). */
  onRecovered?(state: StorageFaultState, seconds: number): void;
  /** Every failed write, counted (`ward_storage_errors_total`). */
  onError?(source: string, code: StorageFaultCode): void;
}

/**
 * The episodes of one host's storage: `report` a failed write (true when it was a storage fault,
 * which opens an episode if none is open), `clear(source)` when that source wrote again; the
 * episode ends when no source is faulted. `error()` is what a refused decision is answered with.
 */
export class StorageFaults {
  private readonly faulted = new Map<string, StorageFaultState>();
  private first: StorageFaultState | undefined;

  constructor(private readonly events: StorageFaultEvents = {}) {}

  get current(): StorageFaultState | undefined {
    return this.first;
  }

  report(source: string, err: unknown): boolean {
    const code = storageFaultCode(err);
    if (!code) return false;
    this.events.onError?.(source, code);
    if (!this.faulted.has(source)) {
      const state: StorageFaultState = { source, code, message: (err as Error).message, since: new Date() };
      this.faulted.set(source, state);
      if (!this.first) {
        this.first = state;
        this.events.onFault?.(state);
      }
    }
    return true;
  }

  /** `source` wrote successfully: its fault (if any) is over. */
  clear(source: string): void {
    if (!this.faulted.delete(source) || this.faulted.size > 0 || !this.first) return;
    const first = this.first;
    this.first = undefined;
    this.events.onRecovered?.(first, (Date.now() - first.since.getTime()) / 1000);
  }

  has(source: string): boolean {
    return this.faulted.has(source);
  }

  /** The refusal for a decision while an episode is open. */
  error(): WardError | undefined {
    const f = this.first;
    return f ? storageFullError(`storage fault (${f.source})`, f.code, new Error(f.message)) : undefined;
  }
}
