import type { JsonObject } from '../../../canon/index.js';
import type { DecisionRequest, DecisionResult } from '../evaluate.js';
import type { HookCallContext, HookReply } from '../hook.js';

// What a coding agent's hook protocol is to Ward: the registry (index.ts) lists one per host.

/** A host's event as far as it was read. */
export type HostHookInput =
  /** A tool call Ward decides. */
  | { kind: 'decide'; payload: JsonObject; event: string }
  /** An event Ward does not decide: the host's neutral reply, no trace. */
  | { kind: 'pass'; event: string }
  /** Input that cannot be decided: a deny in the event's shape (`event` when one could be read). */
  | { kind: 'fail'; event: string | undefined; message: string };

/** One coding agent's hook protocol. */
export interface HookHost {
  /** The name in `ward hook <name>` and `/v1/hooks/<name>`. */
  readonly name: string;
  /** The product's name, for help and messages. */
  readonly label: string;
  /** The events the hook decides (help text). */
  readonly events: readonly string[];
  parseInput(text: string): HostHookInput;
  /** The decision request for a `decide` input: the same for the command hook and the endpoint. */
  request(payload: JsonObject, context: HookCallContext): DecisionRequest;
  reply(event: string, result: DecisionResult): HookReply;
  /** Neutral reply for an event Ward does not decide; `message` (a broken hook command) is shown to the user. */
  pass(event: string, message?: string): HookReply;
  /** The deny when the call cannot be decided; `event` undefined when none could be read. */
  fail(event: string | undefined, message: string): HookReply;
  /** The reply as the endpoint's response body. */
  httpBody(reply: HookReply): JsonObject;
}

