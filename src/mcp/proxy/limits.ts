/**
 * Per-request bounds (docs/mcp-proxy.md "Limits"): what one client request may cost Ward before it
 * is read as an intent. Deciding a call is synchronous work on the one event loop every session
 * shares (parse, normalise, digest, sign: tens of microseconds per argument key, and more per
 * megabyte), so an unbounded call stalls every other session; a request over a bound is refused
 * with a JSON-RPC error naming it, before any of that work.
 */

export interface RequestLimits {
  /** `--max-call-bytes`: the request as received (the stdio line, the HTTP body). */
  maxBytes: number;
  /** `--max-call-keys`: object members and array elements in `params`, at any depth. */
  maxKeys: number;
}

/** 1 MiB and 2,048 keys: the worst call they allow stalls other sessions about 0.1 s (bench/mcp-limits.bench.js). */
export const DEFAULT_REQUEST_LIMITS: RequestLimits = { maxBytes: 1024 * 1024, maxKeys: 2048 };

/**
 * Object members and array elements in `value`, at any depth, counted up to `max + 1` (a count
 * over the bound stops the walk there: the cost of counting is bounded by the limit, not the input).
 */
export function countEntries(value: unknown, max: number): number {
  let n = 0;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      n += v.length;
      if (n > max) return n;
      for (const x of v) if (typeof x === 'object' && x !== null) stack.push(x);
    } else {
      for (const k in v) {
        if (!Object.prototype.hasOwnProperty.call(v, k)) continue;
        if (++n > max) return n;
        const x = (v as Record<string, unknown>)[k];
        if (typeof x === 'object' && x !== null) stack.push(x);
      }
    }
  }
  return n;
}

/** Why a request is over a bound (the message names the flag), or undefined. `bytes` undefined: not known here (checked where it was read). */
export function limitExceeded(params: unknown, bytes: number | undefined, limits: RequestLimits): string | undefined {
  if (bytes !== undefined && bytes > limits.maxBytes) {
    return `Ward refused this request: it is ${bytes} bytes, over the ${limits.maxBytes}-byte limit (--max-call-bytes); it was not forwarded`;
  }
  if (countEntries(params, limits.maxKeys) > limits.maxKeys) {
    return `Ward refused this request: its params have more than ${limits.maxKeys} keys and array elements (--max-call-keys); it was not forwarded`;
  }
  return undefined;
}
