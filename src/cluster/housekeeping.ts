/**
 * Background pruning of shared state, at most once per interval per process, off the decision's
 * path: a decision never waits for it, and a failed prune (the database is away) is simply tried
 * again at the next interval. Nothing a prune removes can decide anything any more (expired
 * tokens, past buckets), so running it late or on several replicas at once is harmless.
 */
export class Housekeeping {
  /** The first prune comes one interval after start: a replica that just started has nothing old of its own to clear. */
  private lastStarted = Date.now();
  private running: Promise<void> | undefined;

  constructor(private readonly everyMs: number) {}

  /** Start `task` unless one is running or one started less than the interval ago. */
  due(task: () => Promise<unknown>): void {
    const now = Date.now();
    if (this.running || now - this.lastStarted < this.everyMs) return;
    this.lastStarted = now;
    this.running = task().then(
      () => undefined,
      () => undefined,
    ).finally(() => {
      this.running = undefined;
    });
  }

  settled(): Promise<void> {
    return this.running ?? Promise.resolve();
  }
}
