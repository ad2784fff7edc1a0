/*
 * Host-name lookups given up on (timed out, host-resolution.ts) that are still running:
 * getaddrinfo cannot be cancelled, and it keeps a process alive until the system resolver gives up
 * (seconds, with an unreachable DNS server). A one-shot CLI exits once its output is written rather
 * than wait for them (cli/main.ts). Its own module, with no imports, so that `ward --version`
 * does not load the resolver to ask.
 */

let abandoned = 0;

/** Count `lookup` as abandoned until it settles. */
export function abandonLookup(lookup: Promise<unknown>): void {
  abandoned++;
  void lookup.finally(() => abandoned--);
}

/** How many abandoned lookups are still running. */
export function abandonedHostLookups(): number {
  return abandoned;
}
