import { claudeCodeHookRequest, failReply, HOOK_EVENTS, httpHookBody, parseHookInput, replyForVerdict, type HookEvent } from '../hook.js';
import type { HookHost } from './host.js';

/** Claude Code (docs/integrations-claude-code.md): the protocol lives in ../hook.ts. */
export const claudeCodeHost: HookHost = {
  name: 'claude-code',
  label: 'Claude Code',
  events: HOOK_EVENTS,
  parseInput(text) {
    const input = parseHookInput(text);
    return input.ok ? { kind: 'decide', payload: input.payload, event: input.event } : { kind: 'fail', event: input.event, message: input.message };
  },
  request: claudeCodeHookRequest,
  reply: (event, result) => replyForVerdict(event as HookEvent, result),
  // Claude Code's hook answers every event it is registered for; there is no event it passes.
  pass: (event, message) => failReply(event as HookEvent, message ?? `unsupported hook event ${JSON.stringify(event)}`),
  fail: (event, message) => failReply(event as HookEvent | undefined, message),
  httpBody: httpHookBody,
};
