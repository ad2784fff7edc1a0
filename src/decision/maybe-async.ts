/**
 * Values that are synchronous for local state and asynchronous for state shared through a database.
 *
 * The decision steps are written once over these: a step whose counter or ledger answers at once
 * stays synchronous (no promise is created, so `gate eval`, the SDK and the MCP proxy decide exactly
 * as before), and the same step over the cluster's PostgreSQL state returns a promise that
 * `decideAsync` awaits (docs/architecture.md, the note under the step table).
 */

export type MaybePromise<T> = T | Promise<T>;

/**
 * `next(value)`, at once when `value` is not a promise; chained after it otherwise. (Not named
 * `then`: a module exporting `then` is itself a thenable to dynamic `import()`.)
 */
export function andThen<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return isPromise(value) ? value.then(next) : next(value);
}

export function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}
