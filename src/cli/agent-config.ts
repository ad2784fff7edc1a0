import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isJsonObject, parseJsonText, type JsonObject, type JsonValue } from '../canon/index.js';
import { shellQuote } from '../decision/approval-command.js';

// What `ward init --agent <host>` writes into a coding agent's own configuration, and how
// `ward doctor` reads it back: one `AgentSetup` per host (AGENT_SETUPS), Claude Code
// (.claude/settings.json), Gemini CLI (.gemini/settings.json), Codex (.codex/hooks.json) and GitHub
// Copilot (.github/hooks/ward.json).

export const AGENTS = ['claude-code', 'gemini-cli', 'codex', 'copilot'] as const;
export type Agent = (typeof AGENTS)[number];
export const HOOK_TRANSPORTS = ['command', 'http'] as const;
export type HookTransport = (typeof HOOK_TRANSPORTS)[number];

const CLAUDE_SETTINGS = join('.claude', 'settings.json');
const GEMINI_SETTINGS = join('.gemini', 'settings.json');
const HTTP_PATH = '/v1/hooks/claude-code';
export const DEFAULT_DAEMON_URL = 'http://127.0.0.1:7433';
const TOKEN_VARIABLE = 'WARD_DAEMON_TOKEN';

export interface HookSpec {
  transport: HookTransport;
  /** How to start Node and Ward's bin/ward.js, absolute (command hook). */
  command: { node: string; wardBin: string };
  /** The daemon (HTTP hook). */
  daemonUrl: string;
  /** The project's directory, absolute (hosts without a documented project variable name it). */
  projectDir: string;
}

/**
 * Ward's PreToolUse hook. The command names bin/ward.js by absolute path, never `npx ward` (which
 * can fetch another package called `ward`), ends in `|| exit 2` (any failure before Ward runs
 * blocks), and reads the project's committed policy. The HTTP hook blocks when the daemon fails.
 */
function claudeCodeHook(spec: HookSpec): JsonObject {
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
function isWardHook(hook: JsonValue): boolean {
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
function withClaudeCodeHook(settings: JsonObject, hook: JsonObject): JsonObject {
  return withHookGroup(settings, 'PreToolUse', '*', hook, isWardHook);
}

/**
 * `settings` with `hook` as the one Ward hook of `event`, in a group of its own matching `matcher`,
 * appended after the user's groups (emptied of earlier Ward hooks, then dropped when empty).
 */
function withHookGroup(settings: JsonObject, event: string, matcher: string, hook: JsonObject, isWard: (hook: JsonValue) => boolean): JsonObject {
  const hooks = isJsonObject(settings['hooks']) ? settings['hooks'] : {};
  const groups = Array.isArray(hooks[event]) ? hooks[event] : [];
  const kept: JsonValue[] = [];
  for (const group of groups) {
    if (!isJsonObject(group) || !Array.isArray(group['hooks'])) {
      kept.push(group);
      continue;
    }
    const others = group['hooks'].filter((h) => !isWard(h));
    if (others.length) kept.push({ ...group, hooks: others });
  }
  return { ...settings, hooks: { ...hooks, [event]: [...kept, { matcher, hooks: [hook] }] } };
}

/** The Ward hooks registered for `event`, each with its group's matcher. */
function wardHooksOf(settings: JsonObject, event: string, isWard: (hook: JsonValue) => boolean): { hook: JsonObject; matcher: JsonValue | undefined }[] {
  const groups = isJsonObject(settings['hooks']) && Array.isArray(settings['hooks'][event]) ? settings['hooks'][event] : [];
  return groups.flatMap((g) =>
    isJsonObject(g) && Array.isArray(g['hooks']) ? (g['hooks'].filter((h) => isWard(h) && isJsonObject(h)) as JsonObject[]).map((hook) => ({ hook, matcher: g['matcher'] })) : [],
  );
}

/** A project's settings file (`relPath`, e.g. `.claude/settings.json`), parsed; undefined when there is none. Malformed JSON throws. */
export function readSettings(projectDir: string, relPath: string): JsonObject | undefined {
  const path = join(projectDir, relPath);
  if (!existsSync(path)) return undefined;
  const parsed = parseJsonText(readFileSync(path, 'utf8'));
  if (!isJsonObject(parsed)) throw new Error(`${relPath} is not a JSON object`);
  return parsed;
}

/** What is wrong with the Ward hooks in the settings (empty when they would block as intended). */
function claudeCodeHookProblems(settings: JsonObject): string[] {
  const ward = wardHooksOf(settings, 'PreToolUse', isWardHook);
  if (ward.length === 0) return ['no Ward PreToolUse hook is registered'];
  const problems: string[] = [];
  for (const { hook } of ward) {
    if (hook['type'] === 'http') {
      if (hook['onFailure'] !== 'block') problems.push('the HTTP hook lacks "onFailure": "block": Claude Code runs the tool when the daemon fails');
      continue;
    }
    problems.push(...commandHookProblems(String(hook['command'])));
  }
  return problems;
}

/** How a host's command hook must end so that a failure before Ward runs blocks the tool. */
interface FailClosedEnding {
  pattern: RegExp;
  problem: string;
}

const EXIT_2: FailClosedEnding = { pattern: /\|\|\s*exit 2\s*$/, problem: 'the command hook does not end in `|| exit 2`: a failure before Ward runs would let the tool run' };

/** What makes a Ward command hook fail open or run something else (any host: they all run a shell command). */
function commandHookProblems(command: string, ending: FailClosedEnding = EXIT_2): string[] {
  const problems: string[] = [];
  if (!ending.pattern.test(command)) problems.push(ending.problem);
  if (/\bnpx\b/.test(command)) problems.push('the command hook runs `npx ward`, which can fetch another package called ward: name bin/ward.js by absolute path');
  const bin = /(\S*bin\/ward\.js)'?/.exec(command)?.[1]?.replace(/^'/, '');
  if (bin && !bin.includes('$') && !existsSync(bin)) problems.push(`the command hook's ${bin} does not exist`);
  return problems;
}

/**
 * Whether a hook entry's shell command (under `field`) is Ward's for `host`: it runs
 * `ward hook <host>`, or hands the event to the daemon's `/v1/hooks/<host>` (the `curl` form).
 */
function runsWardHook(hook: JsonValue, field: string, host: string): boolean {
  if (!isJsonObject(hook)) return false;
  const command = hook[field];
  return typeof command === 'string' && (new RegExp(` hook ${host}( |$)`).test(command) || command.includes(`/v1/hooks/${host}`));
}

// --- Gemini CLI ----------------------------------------------------------------------------------

// Gemini CLI's hooks (google-gemini/gemini-cli docs/hooks/reference.md, docs/hooks/index.md):
// `hooks.BeforeTool` in `.gemini/settings.json` holds groups `{matcher, hooks: [{type: "command",
// command, name, timeout (ms), description}]}`; only command hooks exist; exit 2 blocks the tool,
// any exit other than 0 and 2 is a warning and the tool runs. `hooksConfig.enabled: false` turns
// every hook off and `hooksConfig.disabled` lists hook names that are off.

const GEMINI_EVENT = 'BeforeTool';
/** The name Ward's hook has in Gemini CLI (`/hooks disable ward`, `hooksConfig.disabled`). */
const GEMINI_HOOK_NAME = 'ward';
/** A regex every tool name matches (Gemini CLI's tool matchers are regular expressions). */
const GEMINI_EVERY_TOOL = '.*';
/** Matchers that match every tool: none, "" and "*" (the documented wildcards), and ".*". */
const GEMINI_WILDCARDS: ReadonlySet<JsonValue | undefined> = new Set([undefined, '', '*', '.*']);

/**
 * Ward's BeforeTool hook: bin/ward.js and the project's policy and state by absolute path (Gemini
 * CLI runs hooks with a sanitized environment; the hooks reference Ward follows names no project
 * variable), ending in `|| exit 2` so a hook that cannot start blocks the tool.
 */
function geminiCliHook(spec: HookSpec): JsonObject {
  const command = `${spec.command.node} ${shellQuote(spec.command.wardBin)} hook gemini-cli --policy ${shellQuote(join(spec.projectDir, '.ward.yaml'))} --state-dir ${shellQuote(join(spec.projectDir, '.ward'))} || exit 2`;
  return { name: GEMINI_HOOK_NAME, type: 'command', command, timeout: 10000, description: "Ward: decide every tool call under the project's policy" };
}

/** Whether a hook entry is Ward's Gemini CLI hook. */
const isGeminiWardHook = (hook: JsonValue): boolean => runsWardHook(hook, 'command', 'gemini-cli');

/** The settings with Ward's hook as the one BeforeTool hook of its own group, matching every tool. */
function withGeminiCliHook(settings: JsonObject, hook: JsonObject): JsonObject {
  return withHookGroup(settings, GEMINI_EVENT, GEMINI_EVERY_TOOL, hook, isGeminiWardHook);
}

/** What is wrong with Ward's hook in Gemini CLI's settings (empty when it decides every tool call and fails closed). */
function geminiCliHookProblems(settings: JsonObject): string[] {
  const problems: string[] = [];
  const config = isJsonObject(settings['hooksConfig']) ? settings['hooksConfig'] : {};
  if (config['enabled'] === false) problems.push('hooksConfig.enabled is false: Gemini CLI runs no hook');
  const disabled = Array.isArray(config['disabled']) ? config['disabled'] : [];
  const ward = wardHooksOf(settings, GEMINI_EVENT, isGeminiWardHook);
  if (ward.length === 0) return [...problems, 'no Ward BeforeTool hook is registered'];
  for (const { hook, matcher } of ward) {
    if (!GEMINI_WILDCARDS.has(matcher)) problems.push(`Ward's BeforeTool hook matches only ${JSON.stringify(matcher)}: other tools run undecided`);
    if (hook['type'] !== 'command') problems.push(`Ward's BeforeTool hook has type ${JSON.stringify(hook['type'])}: Gemini CLI runs only "command" hooks`);
    if (typeof hook['name'] === 'string' && disabled.includes(hook['name'])) problems.push(`hooksConfig.disabled turns Ward's hook ${JSON.stringify(hook['name'])} off`);
    problems.push(...commandHookProblems(String(hook['command'])));
  }
  return problems;
}

// --- Codex ---------------------------------------------------------------------------------------

// Codex's hooks (https://developers.openai.com/codex/hooks; openai/codex codex-rs/config/src/
// hook_config.rs and codex-rs/hooks/src/engine/discovery.rs): `<project>/.codex/hooks.json` is
// `{"hooks": {"PreToolUse": [{matcher, hooks: [{type: "command", command, timeout (s),
// statusMessage, async}]}]}}`; matchers are regular expressions (none matches every tool). Exit 2
// blocks only with a reason on stderr; any other failure runs the tool.

const CODEX_HOOKS = join('.codex', 'hooks.json');
const CODEX_EVENT = 'PreToolUse';
const CODEX_EVERY_TOOL = '.*';
const CODEX_WILDCARDS: ReadonlySet<JsonValue | undefined> = new Set([undefined, null, '', '.*']);
const CODEX_ENDING: FailClosedEnding = {
  pattern: /\|\|\s*\{\s*echo\s[^}]*>&2;\s*exit 2;\s*\}\s*$/,
  problem: "the command hook does not end in `|| { echo '…' >&2; exit 2; }`: Codex runs the tool when a hook fails, and blocks on exit 2 only with a reason on stderr",
};

/** Ward's PreToolUse hook for Codex: bin/ward.js and the project's policy and state by absolute path. */
function codexHook(spec: HookSpec): JsonObject {
  const command = `${spec.command.node} ${shellQuote(spec.command.wardBin)} hook codex --policy ${shellQuote(join(spec.projectDir, '.ward.yaml'))} --state-dir ${shellQuote(join(spec.projectDir, '.ward'))} || { echo 'Ward hook failed to start (fail closed)' >&2; exit 2; }`;
  return { type: 'command', command, timeout: 30, statusMessage: "Ward: checking the call against the project's policy" };
}

/** Whether a hook entry is Ward's Codex hook. */
const isCodexWardHook = (hook: JsonValue): boolean => runsWardHook(hook, 'command', 'codex');

/** What is wrong with Ward's hook in `.codex/hooks.json` (empty when it decides every tool call and fails closed). */
function codexHookProblems(settings: JsonObject): string[] {
  const ward = wardHooksOf(settings, CODEX_EVENT, isCodexWardHook);
  if (ward.length === 0) return ['no Ward PreToolUse hook is registered'];
  const problems: string[] = [];
  for (const { hook, matcher } of ward) {
    if (!CODEX_WILDCARDS.has(matcher)) problems.push(`Ward's PreToolUse hook matches only ${JSON.stringify(matcher)}: other tools run undecided`);
    if (hook['type'] !== 'command') problems.push(`Ward's PreToolUse hook has type ${JSON.stringify(hook['type'])}: Codex runs only "command" hooks`);
    if (hook['async'] === true) problems.push("Ward's PreToolUse hook is async: it runs in the background and cannot block");
    problems.push(...commandHookProblems(String(hook['command']), CODEX_ENDING));
  }
  return problems;
}

// --- GitHub Copilot ------------------------------------------------------------------------------

// Copilot's hooks (github/docs content/copilot/reference/copilot-cli-reference/cli-hooks-reference.md,
// reference/hooks-configuration.md): `.github/hooks/*.json` is `{"version": 1, "hooks": {"preToolUse":
// [{type: "command", bash, powershell, cwd, env, timeoutSec}]}}`, read by the CLI and the coding
// agent. "Hook failures (non-zero exit codes or timeouts) … never block": the command must print
// a deny itself when Ward cannot start. Ward writes its own file, `.github/hooks/ward.json`.

const COPILOT_HOOKS = join('.github', 'hooks', 'ward.json');
const COPILOT_EVENT = 'preToolUse';
const COPILOT_START_DENY = `{"permissionDecision":"deny","permissionDecisionReason":"Ward hook failed to start (fail closed)"}`;
const COPILOT_ENDING: FailClosedEnding = {
  pattern: /^out=\$\(.*\)\s*&&\s*printf\s+'%s\\n'\s+"\$out"\s*\|\|\s*echo\s+'\{"permissionDecision":"deny"[^']*\}'\s*$/,
  problem: `the command hook is not \`out=$(… hook copilot …) && printf '%s\\n' "$out" || echo '{"permissionDecision":"deny",…}'\`: Copilot never blocks on an exit code, so a hook that cannot start lets the tool run, and one that printed before failing must not print twice (two JSON values are no answer to Copilot)`,
};

/**
 * Ward's preToolUse hook for Copilot: bin/ward.js by absolute path, the policy and state relative
 * to the repository root (`cwd: "."`), so the file means the same in every clone that has Ward at
 * that path. Ward's answer is printed only when Ward exited 0, so stdout holds exactly one JSON
 * value: Ward's, or the deny.
 */
function copilotHook(spec: HookSpec): JsonObject {
  const bash = `out=$(${spec.command.node} ${shellQuote(spec.command.wardBin)} hook copilot --policy .ward.yaml --state-dir .ward) && printf '%s\\n' "$out" || echo '${COPILOT_START_DENY}'`;
  return { type: 'command', bash, cwd: '.', timeoutSec: 30 };
}

/** Whether a hook entry is Ward's Copilot hook (its command is `bash`). */
const isCopilotWardHook = (hook: JsonValue): boolean => runsWardHook(hook, 'bash', 'copilot');

/** The hooks file with Ward's hook as the last preToolUse hook; the user's other hooks are kept. */
function withCopilotHook(settings: JsonObject, hook: JsonObject): JsonObject {
  const hooks = isJsonObject(settings['hooks']) ? settings['hooks'] : {};
  const entries = Array.isArray(hooks[COPILOT_EVENT]) ? hooks[COPILOT_EVENT] : [];
  return { ...settings, version: 1, hooks: { ...hooks, [COPILOT_EVENT]: [...entries.filter((h) => !isCopilotWardHook(h)), hook] } };
}

/** What is wrong with Ward's hook in `.github/hooks/ward.json` (empty when it decides every tool call and fails closed). */
function copilotHookProblems(settings: JsonObject): string[] {
  const problems: string[] = [];
  if (settings['version'] !== 1) problems.push(`"version" is ${JSON.stringify(settings['version'])}, not 1: Copilot reads hook files of version 1`);
  const hooks = isJsonObject(settings['hooks']) && Array.isArray(settings['hooks'][COPILOT_EVENT]) ? settings['hooks'][COPILOT_EVENT] : [];
  const ward = hooks.filter(isCopilotWardHook) as JsonObject[];
  if (ward.length === 0) return [...problems, 'no Ward preToolUse hook is registered'];
  for (const hook of ward) {
    if (hook['type'] !== 'command') problems.push(`Ward's preToolUse hook has type ${JSON.stringify(hook['type'])}: it must be "command"`);
    problems.push(...commandHookProblems(String(hook['bash']), COPILOT_ENDING));
  }
  return problems;
}

// --- the hosts -----------------------------------------------------------------------------------

/** One coding agent's project configuration, as `ward init --agent` writes it and `ward doctor` checks it. */
export interface AgentSetup {
  readonly agent: Agent;
  readonly label: string;
  /** The settings file, relative to the project. */
  readonly settingsPath: string;
  /** The transports `--hook` may choose. */
  readonly transports: readonly HookTransport[];
  /** The `ward doctor` check's name. */
  readonly doctorCheck: string;
  /** The integration page. */
  readonly doc: string;
  /** What the user still has to do in the host after `ward init` wrote the file. */
  readonly notes?: readonly string[];
  withHook(settings: JsonObject, spec: HookSpec): JsonObject;
  problems(settings: JsonObject): string[];
}

export const AGENT_SETUPS: Readonly<Record<Agent, AgentSetup>> = {
  'claude-code': {
    agent: 'claude-code',
    label: 'Claude Code',
    settingsPath: CLAUDE_SETTINGS,
    transports: HOOK_TRANSPORTS,
    doctorCheck: 'claude_code_hook',
    doc: 'docs/integrations-claude-code.md',
    withHook: (settings, spec) => withClaudeCodeHook(settings, claudeCodeHook(spec)),
    problems: claudeCodeHookProblems,
  },
  'gemini-cli': {
    agent: 'gemini-cli',
    label: 'Gemini CLI',
    settingsPath: GEMINI_SETTINGS,
    // Gemini CLI has no HTTP hooks; a `curl` command to the daemon would need a token in an
    // environment Gemini CLI sanitizes, which its hooks reference does not say it keeps.
    transports: ['command'],
    doctorCheck: 'gemini_cli_hook',
    doc: 'docs/integrations-gemini-cli.md',
    withHook: (settings, spec) => withGeminiCliHook(settings, geminiCliHook(spec)),
    problems: geminiCliHookProblems,
  },
  codex: {
    agent: 'codex',
    label: 'Codex',
    settingsPath: CODEX_HOOKS,
    // Codex has no HTTP hooks (docs/integrations-codex.md shows the `curl` command by hand).
    transports: ['command'],
    doctorCheck: 'codex_hook',
    doc: 'docs/integrations-codex.md',
    notes: ['Codex runs a new or changed hook only once you trust it: open /hooks in Codex and review Ward\'s'],
    withHook: (settings, spec) => withHookGroup(settings, CODEX_EVENT, CODEX_EVERY_TOOL, codexHook(spec), isCodexWardHook),
    problems: codexHookProblems,
  },
  copilot: {
    agent: 'copilot',
    label: 'GitHub Copilot',
    settingsPath: COPILOT_HOOKS,
    // Copilot has no HTTP hooks (docs/integrations-copilot.md shows the `curl` command by hand).
    transports: ['command'],
    doctorCheck: 'copilot_hook',
    doc: 'docs/integrations-copilot.md',
    notes: [
      "commit .github/hooks/ward.json for Copilot's coding agent too: it runs the same command, so its environment needs Node and Ward at the same path (otherwise every call is denied)",
    ],
    withHook: (settings, spec) => withCopilotHook(settings, copilotHook(spec)),
    problems: copilotHookProblems,
  },
};
