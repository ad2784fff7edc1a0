import { nowUTC, type JsonObject } from '../../canon/index.js';
import type { ContextEnvelope } from '../../context/index.js';
import type { NormalizedPolicy } from '../../policy/types.js';
import { findShadowing, isRetrievalTool, scanToolDefinition, TaintMemory, TOOL_SHADOWED, WitnessedContext, type TaintLimits } from '../../witness/index.js';

/**
 * What the proxy witnessed in one MCP session (docs/witness.md): the values tool results handed
 * the model, kept as fingerprints, so a later call's arguments can be traced back to the call whose
 * result they came from, whatever the client claims about them (`--arg-source`).
 */
export class SessionWitness {
  private readonly memory: TaintMemory;
  /** Records of the retrieval results the session's client received (the policy's `context` section). */
  private readonly context = new WitnessedContext();
  /** The envelope of the records as they are now, rebuilt only after a new record. */
  private envelopeCache: ContextEnvelope | undefined;

  constructor(
    private readonly contextSetId: string,
    limits: Partial<TaintLimits> = {},
  ) {
    this.memory = new TaintMemory(limits);
  }

  /**
   * A result the client received from a tool the policy classes as retrieval becomes a ContextSpec
   * v1 record (docs/witness.md "Witnessed context"): its locator, the digest of what was delivered,
   * and now as `retrieved_at`.
   */
  observeRetrieval(policy: NormalizedPolicy, r: { intentToolName: string; server: string; toolName: string; args: unknown; result: unknown; traceId: string }): void {
    if (!isRetrievalTool(policy.context, r.intentToolName)) return;
    if (this.context.observe({ server: r.server, toolName: r.toolName, args: r.args, result: r.result, seenAt: nowUTC(), traceId: r.traceId })) this.envelopeCache = undefined;
  }

  /**
   * The session's witnessed envelope, for a call to `intentToolName` when the policy reads context
   * evidence for it (a rule that could match the tool requires evidence, its mode or a maximum
   * age); undefined when it does not or when nothing was witnessed yet (the call then gets the
   * pinned `--context-envelope`, if any, as before).
   */
  contextFor(policy: NormalizedPolicy, intentToolName: string): ContextEnvelope | undefined {
    if (this.context.size === 0 || !readsContext(policy, intentToolName)) return undefined;
    return this.envelope();
  }

  /** The session's witnessed envelope (undefined before the first retrieval): kept in the session's runpack. */
  envelope(): ContextEnvelope | undefined {
    if (this.context.size === 0) return undefined;
    this.envelopeCache ??= this.context.envelope({ contextSetId: this.contextSetId, createdAt: nowUTC() });
    return this.envelopeCache;
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

/** Does a rule that could match this tool read context evidence? (Tool names lowercased, as rules hold them.) */
export function readsContext(policy: NormalizedPolicy, intentToolName: string): boolean {
  const tool = intentToolName.toLowerCase();
  return policy.rules.some(
    (r) =>
      (r.require_context_evidence || r.required_context_evidence_mode === 'required' || r.max_context_age_seconds > 0) &&
      (r.match.tool_names.length === 0 || r.match.tool_names.includes(tool)),
  );
}
