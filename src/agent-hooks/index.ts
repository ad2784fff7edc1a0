import { claudeCodeHost } from './claude-code.js';
import { codexHost } from './codex.js';
import { copilotHost } from './copilot.js';
import { geminiCliHost } from './gemini-cli.js';
import type { HookHost } from './host.js';

export type { HookHost, HostHookInput, HookReply, HookCallContext, HookDecision, HookDecisionRequest } from './host.js';

// The coding agents Ward answers as a hook, by name: `ward hook <name>` and `POST /v1/hooks/<name>`
// on the daemon both read this registry, so one host is one file here plus its fixtures
// (docs/architecture.md "Adding a coding agent").

export const HOOK_HOSTS: readonly HookHost[] = [claudeCodeHost, geminiCliHost, codexHost, copilotHost];

export function hookHost(name: string): HookHost | undefined {
  return HOOK_HOSTS.find((h) => h.name === name);
}
