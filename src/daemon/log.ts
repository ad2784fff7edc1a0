/**
 * One JSON line per event on stderr. Lines are buffered and written together once per turn of the
 * event loop (a write per request would cost more than some requests), and flushed on shutdown.
 * Callers log ids, routes, statuses, timings and verdicts: never argument values, tokens or bodies.
 */
export class JsonLog {
  private lines: string[] = [];
  private scheduled = false;

  constructor(private readonly write: (text: string) => void) {}

  log(fields: Record<string, unknown>): void {
    this.lines.push(JSON.stringify({ time: new Date().toISOString(), ...fields }));
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  flush(): void {
    this.scheduled = false;
    if (this.lines.length === 0) return;
    const text = this.lines.join('\n') + '\n';
    this.lines = [];
    try {
      this.write(text);
    } catch {
      // stderr closed: logging must never take a decision down
    }
  }
}
