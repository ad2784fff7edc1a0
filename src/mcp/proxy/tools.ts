import { digestJcs, sha256Hex, type JsonObject } from '../../canon/index.js';
import type { NormalizedPolicy, PolicyRule } from '../../policy/types.js';
import { observeTools, type PinStore, type ServerIdentity } from './pins.js';

/** Where a session's pins persist: the store, the server's key and identity. */
export interface PinBinding {
  store: PinStore;
  key: string;
  server: ServerIdentity;
}

/**
 * Tool pinning (`--pin-tools`): the sha256 of each tool's JCS definition (name, description, input
 * schema, annotations) the first time a `tools/list` shows it. A later, different definition (a "rug
 * pull") marks the tool changed; calls to it are blocked. Bound to a {@link PinStore}, the pins
 * persist per server: a definition that differs from the persisted pin is recorded as pending, and
 * the block lifts in the running session once the operator accepts it (`ward mcp pins accept`).
 * Without a binding the pins live for the session. Either way a flag, once raised, is not lowered
 * by the server changing the definition back; only the operator's accept (or forget) lowers it.
 */
export class ToolPins {
  private readonly pins = new Map<string, string>();
  /** The latest digest the server listed for each tool. */
  private readonly seen = new Map<string, string>();
  private readonly seenDefinition = new Map<string, JsonObject>();
  /** Changed tools, with the persisted pin they were found to differ from. */
  private readonly changed = new Map<string, string | undefined>();
  /** Tools held for a suspicious definition (the witness's tool scan), with its reason codes. */
  private readonly held = new Map<string, string[]>();
  private binding: PinBinding | undefined;

  /** @param onError told when the pins file cannot be read or written (the tool is then blocked: fail closed). */
  constructor(private readonly onError?: (err: Error, tool: string) => void) {}

  bind(binding: PinBinding): void {
    this.binding = binding;
  }

  get serverKey(): string | undefined {
    return this.binding?.key;
  }

  /** Record or check one listed tool; returns true when it no longer matches its pin. */
  observe(tool: Record<string, unknown>): boolean {
    if (this.binding) return this.observeList([tool]).length > 0;
    const name = String(tool['name']);
    const digest = definitionDigest(tool);
    this.seen.set(name, digest);
    const pinned = this.pins.get(name);
    if (pinned === undefined) {
      this.pins.set(name, digest);
      return false;
    }
    if (pinned !== digest) {
      this.changed.set(name, pinned);
      return true;
    }
    return this.changed.has(name);
  }

  /**
   * {@link observe} for every tool of one `tools/list` (one read and at most one write of the pins
   * file). Returns the names of the tools that no longer match their pins.
   */
  observeList(tools: readonly Record<string, unknown>[], suspicion?: ReadonlyMap<string, string[]>): string[] {
    const b = this.binding;
    if (!b) {
      // Session pins: a suspicious tool stays held for the session (no operator can accept it).
      for (const [name, codes] of suspicion ?? []) this.held.set(name, codes);
      return tools.filter((t) => this.observe(t)).map((t) => String(t['name']));
    }
    const entries = tools.map((tool) => {
      const name = String(tool['name']);
      const digest = definitionDigest(tool);
      const definition = definitionOf(tool) as JsonObject;
      this.seen.set(name, digest);
      this.seenDefinition.set(name, definition);
      return { name, digest, definition, suspicion: suspicion?.get(name) };
    });
    try {
      const results = observeTools(b.store, b.key, b.server, entries);
      for (const [name, r] of results) {
        if (r.check === 'changed' && !this.changed.has(name)) this.changed.set(name, r.pinned);
        if (r.check === 'held') this.held.set(name, suspicion?.get(name) ?? []);
      }
    } catch (err) {
      for (const e of entries) {
        this.onError?.(err as Error, e.name);
        if (!this.changed.has(e.name)) this.changed.set(e.name, undefined);
      }
    }
    return entries.filter((e) => this.changed.has(e.name)).map((e) => e.name);
  }

  /**
   * Is this tool blocked? For a persisted pin the file is read again, so an accept (or forget) takes
   * effect in the running session: the block lifts when the pin now is what the server last listed.
   */
  isChanged(name: string): boolean {
    if (!this.changed.has(name)) return false;
    const b = this.binding;
    const seen = this.seen.get(name);
    if (!b || seen === undefined) return true;
    try {
      const entry = b.store.read(b.key)?.tools[name];
      if (!entry) {
        // Forgotten by the operator: pinned afresh on this sight.
        const definition = this.seenDefinition.get(name) ?? ({ name } as JsonObject);
        if (observeTools(b.store, b.key, b.server, [{ name, digest: seen, definition }]).get(name)?.check === 'changed') return true;
      } else if (entry.pinned !== seen || entry.pinned === this.changed.get(name)) {
        return true;
      }
    } catch (err) {
      this.onError?.(err as Error, name);
      return true;
    }
    this.changed.delete(name);
    return false;
  }

  /**
   * The reason codes a tool is held for (its definition is suspicious and no operator accepted
   * it), or undefined. With persisted pins the file is read again, so `ward mcp pins accept` lifts
   * the hold in a running session once the accepted digest is what the server last listed.
   */
  heldFor(name: string): string[] | undefined {
    const codes = this.held.get(name);
    if (codes === undefined) return undefined;
    const b = this.binding;
    const seen = this.seen.get(name);
    if (!b || seen === undefined) return codes;
    try {
      const entry = b.store.read(b.key)?.tools[name];
      if (!entry || entry.pinned !== seen || entry.accepted !== seen) return codes;
    } catch (err) {
      this.onError?.(err as Error, name);
      return codes;
    }
    this.held.delete(name);
    return undefined;
  }

  get size(): number {
    return this.binding ? this.seen.size : this.pins.size;
  }
}

function definitionOf(tool: Record<string, unknown>): Record<string, unknown> {
  return {
    name: tool['name'] ?? null,
    description: tool['description'] ?? null,
    inputSchema: tool['inputSchema'] ?? null,
    annotations: tool['annotations'] ?? null,
  };
}

export function definitionDigest(tool: Record<string, unknown>): string {
  const def = definitionOf(tool);
  try {
    return digestJcs(def as never);
  } catch {
    return sha256Hex(JSON.stringify(def));
  }
}

/**
 * `--hide-blocked-tools`: is every call to `toolName` blocked whatever its arguments? True when the
 * first priority tier with a rule that could match the tool holds an unconditional block rule for
 * it (tier verdicts combine most-restrictive, and later steps only tighten), or when no rule can
 * match the tool and the default verdict is block. Conservative: anything else stays listed.
 */
export function alwaysBlocked(policy: NormalizedPolicy, toolName: string): boolean {
  let tier: number | undefined;
  let blocked = false;
  for (const rule of policy.rules) {
    if (tier !== undefined && rule.priority !== tier) break;
    if (rule.match.tool_names.length && !rule.match.tool_names.includes(toolName)) continue;
    tier = rule.priority;
    if (unconditionalBlock(rule, toolName)) blocked = true;
  }
  if (tier === undefined) return policy.default_verdict === 'block';
  return blocked;
}

function unconditionalBlock(rule: PolicyRule, toolName: string): boolean {
  if (rule.effect !== 'block' || rule.dataflow.enabled) return false;
  const m = rule.match as unknown as Record<string, unknown>;
  if (!rule.match.tool_names.includes(toolName)) return false;
  for (const [key, value] of Object.entries(m)) {
    if (key === 'tool_names') continue;
    if (Array.isArray(value) ? value.length > 0 : value !== undefined && value !== false) return false;
  }
  return true;
}
