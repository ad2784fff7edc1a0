import { goCleanPath, type JsonObject } from '../canon/index.js';
import type { NormalizedPolicy } from './types.js';

/**
 * Claude Code's own sandbox settings (the `sandbox` block of `.claude/settings.json`), derived from
 * a Ward policy: confinement where a gate cannot see. Claude Code runs Bash commands (opaque to
 * Ward, by design) inside an OS sandbox it configures from these keys; Ward's hook keeps deciding
 * its file, web and MCP tools. Key names as in Claude Code's settings reference (looked up for
 * issue 26: `sandbox.enabled`, `allowUnsandboxedCommands`, `filesystem.denyRead`/`denyWrite`,
 * `network.allowedDomains`); docs/integrations-claude-code.md says what maps and what does not.
 */
export interface ClaudeSandboxSettings {
  sandbox: JsonObject;
  /** Policy entries the sandbox cannot express, each with why: the hook still enforces them for the tools it sees. */
  notExpressed: string[];
}

export function claudeSandboxSettings(policy: NormalizedPolicy, workspace: string): ClaudeSandboxSettings {
  const denyPaths = new Set<string>();
  const allowDomains = new Set<string>();
  const notExpressed: string[] = [];
  const note = (rule: string, list: string, entry: string, why: string) => notExpressed.push(`rule ${rule}: endpoint.${list} ${JSON.stringify(entry)}: ${why}`);
  for (const rule of policy.rules) {
    if (!rule.endpoint.enabled) continue;
    for (const entry of rule.endpoint.path_denylist) {
      const path = sandboxPath(entry, workspace);
      if (path === undefined) note(rule.name, 'path_denylist', entry, 'a relative pattern needs an absolute workspace');
      else denyPaths.add(path);
    }
    for (const entry of rule.endpoint.domain_allowlist) {
      if (isDomainPattern(entry)) allowDomains.add(entry.toLowerCase());
      else note(rule.name, 'domain_allowlist', entry, 'the sandbox allows domain names and *.globs only');
    }
    for (const entry of rule.endpoint.domain_denylist) {
      note(rule.name, 'domain_denylist', entry, 'the sandbox network is allow-only: list the allowed domains (endpoint.domain_allowlist) to confine it');
    }
    for (const entry of rule.endpoint.path_allowlist) {
      note(rule.name, 'path_allowlist', entry, 'not widened into the sandbox (it writes only where Claude Code allows by default)');
    }
  }
  const filesystem: JsonObject = {};
  if (denyPaths.size) {
    const paths = [...denyPaths].sort();
    filesystem['denyRead'] = paths;
    filesystem['denyWrite'] = paths;
  }
  const sandbox: JsonObject = { enabled: true, allowUnsandboxedCommands: false };
  if (Object.keys(filesystem).length) sandbox['filesystem'] = filesystem;
  if (allowDomains.size) sandbox['network'] = { allowedDomains: [...allowDomains].sort() };
  return { sandbox, notExpressed };
}

/**
 * A policy path pattern as a sandbox path. Absolute paths are written with a leading `//` (the
 * settings' spelling of "from the file-system root": a single `/` may be read relative to the
 * settings file's directory); `~/` stays as it is; a relative pattern names a path in the workspace.
 */
function sandboxPath(pattern: string, workspace: string): string | undefined {
  if (pattern.startsWith('~/')) return pattern;
  if (pattern.startsWith('/')) return `/${goCleanPath(pattern)}`;
  if (!workspace.startsWith('/')) return undefined;
  return `/${goCleanPath(`${workspace}/${pattern}`)}`;
}

/** A host name or a `*.` glob (no address, range, class or port). */
function isDomainPattern(entry: string): boolean {
  if (entry.startsWith('class:') || entry.includes('/') || entry.includes(':')) return false;
  const name = entry.startsWith('*.') ? entry.slice(2) : entry;
  if (/^[0-9.]+$/.test(name)) return false; // an IPv4 address
  return /^[a-z0-9-]+(\.[a-z0-9-]+)*$/i.test(name);
}
