import type { JsonObject } from '../../canon/index.js';
import { findShadowing, scanToolDefinition, TaintMemory, TOOL_SHADOWED, type TaintLimits } from '../../witness/index.js';

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

/** What makes one listed tool suspicious: reason codes, and the scan's kinds and paths (for the log; never the text). */
export interface ToolSuspicion {
  codes: string[];
  found: string[];
}

/**
 * The tools of one `tools/list` whose definitions are suspicious (docs/witness.md "Tool
 * definitions"): instruction-like text, HTML comments or invisible characters anywhere in the
 * definition, and names that fold to the name of a tool listed before them (the first listed keeps
 * its name; a later look-alike is held).
 */
export function toolSuspicion(tools: readonly JsonObject[]): Map<string, ToolSuspicion> {
  const out = new Map<string, ToolSuspicion>();
  const add = (name: string, code: string, found: string) => {
    const s = out.get(name) ?? { codes: [], found: [] };
    if (!s.codes.includes(code)) s.codes.push(code);
    if (!s.found.includes(found)) s.found.push(found);
    out.set(name, s);
  };
  const names = tools.map((t) => String(t['name']));
  for (const tool of tools) {
    for (const f of scanToolDefinition(tool)) add(String(tool['name']), f.reason_code, `${f.kind} at ${f.path}`);
  }
  const firstIndex = new Map<string, number>();
  names.forEach((n, i) => firstIndex.has(n) || firstIndex.set(n, i));
  for (const group of findShadowing({ server: names })) {
    const ordered = group.tools.map((t) => t.name).sort((a, b) => firstIndex.get(a)! - firstIndex.get(b)!);
    for (const later of ordered.slice(1)) add(later, TOOL_SHADOWED, `name folds like ${ordered[0]!}`);
  }
  for (const s of out.values()) s.codes.sort();
  return out;
}
