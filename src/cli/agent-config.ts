import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isJsonObject, parseJsonText, type JsonObject, type JsonValue } from '../canon/index.js';
import { shellQuote } from '../decision/approval-command.js';

// What `ward init --agent <host>` writes into a coding agent's own configuration, and how
// `ward doctor` reads it back. One host today: Claude Code (.claude/settings.json).

export const AGENTS = ['claude-code'] as const;
export type Agent = (typeof AGENTS)[number];
export const HOOK_TRANSPORTS = ['command', 'http'] as const;
export type HookTransport = (typeof HOOK_TRANSPORTS)[number];

export const CLAUDE_SETTINGS = join('.claude', 'settings.json');
const HTTP_PATH = '/v1/hooks/claude-code';
export const DEFAULT_DAEMON_URL = 'http://127.0.0.1:7433';
const TOKEN_VARIABLE = 'WARD_DAEMON_TOKEN';

export interface HookSpec {
  transport: HookTransport;
  /** How to start Node and Ward's bin/ward.js, absolute (command hook). */
  command: { node: string; wardBin: string };
  /** The daemon (HTTP hook). */
  daemonUrl: string;
}

/**
 * Ward's PreToolUse hook. The command names bin/ward.js by absolute path, never `npx ward` (which
 * can fetch another package called `ward`), ends in `|| exit 2` (any failure before Ward runs
 * blocks), and reads the project's committed policy. The HTTP hook blocks when the daemon fails.
 */
export function claudeCodeHook(spec: HookSpec): JsonObject {
  if (spec.transport === 'http') {
    return {
      type: 'http',
      url: `${spec.daemonUrl.replace(/\/+$/, '')}${HTTP_PATH}`,
      headers: { Authorization: `Bearer $${TOKEN_VARIABLE}` },
      allowedEnvVars: [TOKEN_VARIABLE],
      timeout: 10,
      onFailure: 'block',
    };
  }
  const command = `${spec.command.node} ${shellQuote(spec.command.wardBin)} hook claude-code --policy "$CLAUDE_PROJECT_DIR/.ward.yaml" --state-dir "$CLAUDE_PROJECT_DIR/.ward" || exit 2`;
  return { type: 'command', command, timeout: 10 };
}

/** Whether a hook entry is one Ward wrote (either transport). */
export function isWardHook(hook: JsonValue): boolean {
  if (!isJsonObject(hook)) return false;
  const command = hook['command'];
  const url = hook['url'];
  return (typeof command === 'string' && / hook claude-code( |$)/.test(command)) || (typeof url === 'string' && url.replace(/\/+$/, '').endsWith(HTTP_PATH));
}

/**
 * The settings with Ward's hook as the one PreToolUse hook of its own group (matcher `*`: every
 * tool, MCP tools included); the user's other hooks and settings are kept as they are. Running it
 * again with the same spec gives the same settings.
 */
export function withClaudeCodeHook(settings: JsonObject, hook: JsonObject): JsonObject {
  const hooks = isJsonObject(settings['hooks']) ? settings['hooks'] : {};
  const groups = Array.isArray(hooks['PreToolUse']) ? hooks['PreToolUse'] : [];
  const kept: JsonValue[] = [];
  for (const group of groups) {
    if (!isJsonObject(group) || !Array.isArray(group['hooks'])) {
      kept.push(group);
      continue;
    }
    const others = group['hooks'].filter((h) => !isWardHook(h));
    if (others.length) kept.push({ ...group, hooks: others });
  }
  return { ...settings, hooks: { ...hooks, PreToolUse: [...kept, { matcher: '*', hooks: [hook] }] } };
}

/** `.claude/settings.json` of a project, parsed; undefined when there is none. Malformed JSON throws. */
export function readClaudeSettings(projectDir: string): JsonObject | undefined {
  const path = join(projectDir, CLAUDE_SETTINGS);
  if (!existsSync(path)) return undefined;
  const parsed = parseJsonText(readFileSync(path, 'utf8'));
  if (!isJsonObject(parsed)) throw new Error(`${CLAUDE_SETTINGS} is not a JSON object`);
  return parsed;
}

/** What is wrong with the Ward hooks in the settings (empty when they would block as intended). */
export function claudeCodeHookProblems(settings: JsonObject): string[] {
  const hooks = isJsonObject(settings['hooks']) && Array.isArray(settings['hooks']['PreToolUse']) ? settings['hooks']['PreToolUse'] : [];
  const ward = hooks.flatMap((g) => (isJsonObject(g) && Array.isArray(g['hooks']) ? g['hooks'].filter(isWardHook) : [])) as JsonObject[];
  if (ward.length === 0) return ['no Ward PreToolUse hook is registered'];
  const problems: string[] = [];
  for (const hook of ward) {
    if (hook['type'] === 'http') {
      if (hook['onFailure'] !== 'block') problems.push('the HTTP hook lacks "onFailure": "block": Claude Code runs the tool when the daemon fails');
      continue;
    }
    const command = String(hook['command']);
    if (!/\|\|\s*exit 2\s*$/.test(command)) problems.push('the command hook does not end in `|| exit 2`: a failure before Ward runs would let the tool run');
    if (/\bnpx\b/.test(command)) problems.push('the command hook runs `npx ward`, which can fetch another package called ward: name bin/ward.js by absolute path');
    const bin = /(\S*bin\/ward\.js)'?/.exec(command)?.[1]?.replace(/^'/, '');
    if (bin && !bin.includes('$') && !existsSync(bin)) problems.push(`the command hook's ${bin} does not exist`);
  }
  return problems;
}
