import type { JsonObject } from '../../canon/index.js';
import { TaintMemory, type TaintLimits } from '../../witness/index.js';

/**
 * What the proxy witnessed in one MCP session (docs/witness.md): the values tool results handed
 * the model, kept as fingerprints, so a later call's arguments can be traced back to the call whose
 * result they came from, whatever the client claims about them (`--arg-source`).
 */
export class SessionWitness {
  private readonly memory: TaintMemory;

  constructor(limits: Partial<TaintLimits> = {}) {
    this.memory = new TaintMemory(limits);
  }

  /**
   * Remember what a call's result (or error) showed the model. Called once the reply is on its
   * way to the client and before any later message of the session is read, so the next call
   * already sees it.
   */
  observe(traceId: string, toolName: string, payload: unknown): void {
    this.memory.remember(payload, { traceId, toolName });
  }

  /**
   * The arguments of a call that carry a value an earlier result returned: top-level argument name
   * → the trace id it came from. When several earlier results held it, the smallest trace id is
   * named, so an identical retry (after an approval, say) gets the same intent digest. Undefined
   * when nothing matched (the common case: the intent is then exactly as without a witness).
   */
  argumentSources(args: JsonObject): Map<string, string> | undefined {
    const hits = this.memory.match(args);
    if (hits.length === 0) return undefined;
    const out = new Map<string, string>();
    for (const hit of hits) {
      const name = topLevelArgument(hit.argPath);
      if (name === undefined || !Object.prototype.hasOwnProperty.call(args, name)) continue;
      const known = out.get(name);
      if (known === undefined || hit.traceId < known) out.set(name, hit.traceId);
    }
    return out.size ? out : undefined;
  }

  get size(): number {
    return this.memory.size;
  }
}

/** `$.body` → `body`, `$["a b"].x` → `a b`, `$.h#key` → `h`; undefined for anything else. */
export function topLevelArgument(path: string): string | undefined {
  if (path.startsWith('$.')) {
    const m = /^\$\.([A-Za-z_][A-Za-z0-9_]*)/.exec(path);
    return m?.[1];
  }
  if (path.startsWith('$[')) {
    const m = /^\$\[("(?:[^"\\]|\\.)*")\]/.exec(path);
    if (!m) return undefined;
    try {
      return JSON.parse(m[1]!) as string;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
