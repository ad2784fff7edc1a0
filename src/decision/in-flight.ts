/** Writes still running, so that a host's `close()` can wait for every one of them to settle. */
export class InFlight {
  readonly #pending = new Set<Promise<unknown>>();

  track<T>(work: Promise<T>): Promise<T> {
    this.#pending.add(work);
    const forget = () => this.#pending.delete(work);
    void work.then(forget, forget);
    return work;
  }

  async settled(): Promise<void> {
    await Promise.allSettled([...this.#pending]);
  }
}
