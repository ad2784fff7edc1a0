import { hostsToResolve, policyNeedsResolution } from '../gate/host-list.js';
import type { HostResolution, ResolvedHosts } from '../intent/address.js';
import { canonicalHostname } from '../intent/canonical.js';
import { normalizeIntent } from '../intent/normalize.js';
import type { NormalizedPolicy } from '../policy/types.js';
import { abandonLookup } from './pending-lookups.js';

/*
 * Host names resolved before evaluation (docs/canonical-targets.md, "Names are resolved"). When a
 * policy's domain lists name an address, a range or a class, a host name is judged by the
 * addresses it resolves to as well: `169.254.169.254.nip.io` is the metadata service. Resolution is
 * I/O, so it happens here, at the edge, and `evaluate()` stays pure: every host (CLI, SDK, daemon,
 * MCP proxy, decision service, hook) awaits `resolveIntentHosts` and passes what it found in the
 * request's `resolvedHosts`. The daemon resolves too when it decides for another machine: its view
 * of the network is the one closest to the effect that Ward has.
 *
 * Each wait has a bound (`timeoutMs`); answers are cached briefly (`ttlMs`; failures for
 * `failureTtlMs`) so a burst of calls to one host costs one lookup. Between this lookup and the
 * tool's own connection the name may resolve differently (DNS rebinding): a documented limit.
 */

/** A resolver: the addresses of a name, or a rejection. */
export type HostLookup = (name: string) => Promise<readonly string[]>;

/**
 * The operating system's resolver (`getaddrinfo`: /etc/hosts, then DNS), every address. node:dns
 * is loaded by the first lookup: most calls name no host, and loading it would cost every one-shot
 * command (`gate eval`, a hook) about 2 ms.
 */
export const systemLookup: HostLookup = async (name) => {
  const { lookup } = await import('node:dns/promises');
  return (await lookup(name, { all: true, verbatim: true })).map((a) => a.address);
};

export interface HostResolverOptions {
  lookup?: HostLookup;
  /** Bound on one lookup (default 1,500 ms); a lookup that takes longer is a failure. */
  timeoutMs?: number;
  /** How long an answer is reused (default 30 s). */
  ttlMs?: number;
  /** How long a failure is reused (default 5 s). */
  failureTtlMs?: number;
  /** Entries kept at most (default 1,024; the oldest go first). */
  maxEntries?: number;
  /** Clock in milliseconds (tests). */
  now?: () => number;
}

export class HostResolver {
  readonly #lookup: HostLookup;
  readonly #timeoutMs: number;
  readonly #ttlMs: number;
  readonly #failureTtlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;
  readonly #cache = new Map<string, { result: HostResolution; until: number }>();
  readonly #inFlight = new Map<string, Promise<HostResolution>>();

  constructor(opts: HostResolverOptions = {}) {
    this.#lookup = opts.lookup ?? systemLookup;
    this.#timeoutMs = opts.timeoutMs ?? 1500;
    this.#ttlMs = opts.ttlMs ?? 30_000;
    this.#failureTtlMs = opts.failureTtlMs ?? 5_000;
    this.#maxEntries = opts.maxEntries ?? 1024;
    this.#now = opts.now ?? Date.now;
  }

  /** Every name's addresses (canonical form) or why there are none. Never rejects. */
  async resolve(names: readonly string[]): Promise<ResolvedHosts> {
    const results = await Promise.all(names.map((name) => this.#resolveOne(name)));
    return new Map(names.map((name, i) => [name, results[i]!]));
  }

  #resolveOne(name: string): Promise<HostResolution> {
    const hit = this.#cache.get(name);
    if (hit && hit.until > this.#now()) return Promise.resolve(hit.result);
    let pending = this.#inFlight.get(name);
    if (!pending) {
      pending = this.#lookupBounded(name).then((result) => {
        this.#inFlight.delete(name);
        this.#remember(name, result);
        return result;
      });
      this.#inFlight.set(name, pending);
    }
    return pending;
  }

  #remember(name: string, result: HostResolution): void {
    this.#cache.delete(name);
    if (this.#cache.size >= this.#maxEntries) this.#cache.delete(this.#cache.keys().next().value!);
    this.#cache.set(name, { result, until: this.#now() + ('error' in result ? this.#failureTtlMs : this.#ttlMs) });
  }

  async #lookupBounded(name: string): Promise<HostResolution> {
    let timer: NodeJS.Timeout | undefined;
    const lookup = this.#lookupOnce(name);
    const timeout = new Promise<HostResolution>((resolve) => {
      timer = setTimeout(() => {
        abandonLookup(lookup);
        resolve({ error: `no answer within ${this.#timeoutMs} ms` });
      }, this.#timeoutMs);
      timer.unref();
    });
    try {
      return await Promise.race([lookup, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async #lookupOnce(name: string): Promise<HostResolution> {
    let raw: readonly string[];
    try {
      raw = await this.#lookup(name);
    } catch (err) {
      return { error: (err as NodeJS.ErrnoException).code ?? (err as Error).message };
    }
    const addresses = new Set<string>();
    for (const a of raw) {
      const canonical = canonicalHostname(a);
      // An answer that is not an address cannot be judged: the name is not resolved.
      if (!canonical.ok || !/^[0-9a-f:.]+$/.test(canonical.value)) return { error: `resolver answered ${JSON.stringify(a)}, not an address` };
      addresses.add(canonical.value);
    }
    if (addresses.size === 0) return { error: 'no addresses' };
    return { addresses: [...addresses].sort() };
  }
}

let shared: HostResolver | undefined;

/** The process's resolver over the system's, shared so its cache serves every decision. */
export function defaultHostResolver(): HostResolver {
  return (shared ??= new HostResolver());
}

/**
 * The resolutions a decision needs: undefined when the policy's domain lists name no address,
 * range or class (nothing to resolve, and the trace says nothing), else every host name the
 * intents' targets reach, resolved. Intents that do not normalize are skipped: evaluation reports them.
 */
export async function resolveIntentHosts(
  policy: NormalizedPolicy,
  intents: readonly unknown[],
  resolver: HostResolver = defaultHostResolver(),
): Promise<ResolvedHosts | undefined> {
  if (!policyNeedsResolution(policy)) return undefined;
  const names = new Set<string>();
  for (const raw of intents) {
    let intent;
    try {
      intent = normalizeIntent(raw);
    } catch {
      continue;
    }
    for (const name of hostsToResolve(policy, intent)) names.add(name);
  }
  return resolver.resolve([...names]);
}
