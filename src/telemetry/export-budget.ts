import type { ExportResult } from '@opentelemetry/core';

/**
 * The bound on what waits for a collector (spans, log records): past `max` waiting, an item is
 * dropped and counted instead of queued — a slow or dead collector never holds a decision or
 * grows memory. The SDK's batch processors drop too, but silently; this counts.
 */
export class ExportBudget {
  queued = 0;
  dropped = 0;
  failed = 0;

  constructor(private readonly max: number) {}

  /** Whether one more item may wait for export (false: dropped, counted). */
  admit(): boolean {
    if (this.queued >= this.max) {
      this.dropped++;
      return false;
    }
    this.queued++;
    return true;
  }

  /** `n` items left the queue: delivered, or (`ok` false) failed after the exporter's retries. */
  settled(n: number, ok: boolean): void {
    this.queued -= n;
    if (!ok) this.failed += n;
  }
}

interface BatchExporter<T> {
  export(items: T[], done: (result: ExportResult) => void): void;
  shutdown(): Promise<void>;
  forceFlush?(): Promise<void>;
}

/** The exporter, settling the budget for what leaves the queue (exported or failed). */
export function budgetedExporter<T>(inner: BatchExporter<T>, budget: ExportBudget): Required<BatchExporter<T>> {
  return {
    export(items, done) {
      inner.export(items, (result) => {
        budget.settled(items.length, result.code === 0);
        done(result);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}
