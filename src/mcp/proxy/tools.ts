import { digestJcs, sha256Hex } from '../../canon/digest.js';
import type { NormalizedPolicy, PolicyRule } from '../../policy/types.js';

/**
 * Tool pinning (`--pin-tools`): the sha256 of each tool's JCS definition (name, description, input
 * schema, annotations) the first time a `tools/list` shows it. A later, different definition within
 * the session (a "rug pull") marks the tool changed; calls to it are blocked.
 */
export class ToolPins {
  private readonly pins = new Map<string, string>();
  private readonly changed = new Set<string>();

  /** Record or check one listed tool; returns true when it no longer matches its pin. */
  observe(tool: Record<string, unknown>): boolean {
    const name = String(tool['name']);
    const digest = definitionDigest(tool);
    const pinned = this.pins.get(name);
    if (pinned === undefined) {
      this.pins.set(name, digest);
      return false;
    }
    if (pinned !== digest) {
      this.changed.add(name);
      return true;
    }
    return this.changed.has(name);
  }

  isChanged(name: string): boolean {
    return this.changed.has(name);
  }

  get size(): number {
    return this.pins.size;
  }
}

export function definitionDigest(tool: Record<string, unknown>): string {
  const def = {
    name: tool['name'] ?? null,
    description: tool['description'] ?? null,
    inputSchema: tool['inputSchema'] ?? null,
    annotations: tool['annotations'] ?? null,
  };
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
