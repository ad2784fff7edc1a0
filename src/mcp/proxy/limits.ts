/**
 * Per-request bounds (docs/mcp-proxy.md "Limits"): what one client request may cost Ward before it
 * is read as an intent. Deciding a call is synchronous work (normalise, digest, evaluate, sign:
 * microseconds per argument key, and more per megabyte); an unbounded call would hold the event
 * loop every session shares, or the decision thread, for seconds. A request over a bound is
 * refused with a JSON-RPC error naming it, before any of that work; a large one within them is
 * decided off the event loop (`OFF_LOOP_THRESHOLD`).
 */

export interface RequestLimits {
  /** `--max-call-bytes`: the request as received (the stdio line, the HTTP body). */
  maxBytes: number;
  /** `--max-call-keys`: object members and array elements in `params`, at any depth. */
  maxKeys: number;
}

/** 1 MiB and 2,048 keys: the worst call they allow costs about 10–20 ms to decide (bench/mcp-limits.bench.js). */
export const DEFAULT_REQUEST_LIMITS: RequestLimits = { maxBytes: 1024 * 1024, maxKeys: 2048 };

/**
 * Past either bound a call is decided on the decision thread rather than inline (`--listen`,
 * decision-thread.ts): about a millisecond of deciding at ~5 µs per key and ~16 ns per character
 * (bench/mcp-limits.bench.js). Below them the inline path is cheaper than the hop to the thread.
 */
export const OFF_LOOP_THRESHOLD = { entries: 256, chars: 64 * 1024 };

/** How much there is to read in a request's params: entries as `countEntries` counts them, and the characters of its keys and strings. */
interface RequestWeight {
  entries: number;
  chars: number;
}

/**
 * Object members and array elements in `value`, at any depth, and the characters of its member
 * names and strings; the walk stops once `entries` passes `max` (the cost of weighing is bounded
 * by the limit, not the input).
 */
function weigh(value: unknown, max: number): RequestWeight {
  let n = 0;
  let chars = typeof value === 'string' ? value.length : 0;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      n += v.length;
      if (n > max) return { entries: n, chars };
      for (const x of v) {
        if (typeof x === 'string') chars += x.length;
        else if (typeof x === 'object' && x !== null) stack.push(x);
      }
    } else {
      for (const k in v) {
        if (!Object.prototype.hasOwnProperty.call(v, k)) continue;
        if (++n > max) return { entries: n, chars };
        chars += k.length;
        const x = (v as Record<string, unknown>)[k];
        if (typeof x === 'string') chars += x.length;
        else if (typeof x === 'object' && x !== null) stack.push(x);
      }
    }
  }
  return { entries: n, chars };
}

/** Object members and array elements in `value`, at any depth, counted up to `max + 1` (`weigh`). */
export function countEntries(value: unknown, max: number): number {
  return weigh(value, max).entries;
}

/** Why a request is over a bound (the message names the flag), or undefined. `bytes` undefined: not known here (checked where it was read). */
export function limitExceeded(params: unknown, bytes: number | undefined, limits: RequestLimits): string | undefined {
  return checkRequest(params, bytes, limits).over;
}

/**
 * A request against the bounds: `over` says why it is refused (the message names the flag);
 * otherwise `offLoop` says whether deciding it is worth moving off the event loop.
 */
export function checkRequest(params: unknown, bytes: number | undefined, limits: RequestLimits): { over?: string; offLoop: boolean } {
  if (bytes !== undefined && bytes > limits.maxBytes) {
    return { over: `Ward refused this request: it is ${bytes} bytes, over the ${limits.maxBytes}-byte limit (--max-call-bytes); it was not forwarded`, offLoop: false };
  }
  const w = weigh(params, limits.maxKeys);
  if (w.entries > limits.maxKeys) {
    return { over: `Ward refused this request: its params have more than ${limits.maxKeys} keys and array elements (--max-call-keys); it was not forwarded`, offLoop: false };
  }
  return { offLoop: w.entries > OFF_LOOP_THRESHOLD.entries || w.chars > OFF_LOOP_THRESHOLD.chars || (bytes ?? 0) > OFF_LOOP_THRESHOLD.chars };
}
