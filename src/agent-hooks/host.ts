import type { JsonObject } from '../canon/index.js';
import type { Verdict } from '../policy/types.js';
import type { ToolCall } from './tool-call.js';

// What a coding agent's hook protocol is to Ward: the registry (index.ts) lists one per host. The
// types here are all a host needs from the hosts that run it (the `ward hook` command, the daemon's
// `/v1/hooks/<host>`): a host never imports them, they import it (docs/architecture.md).

/**
 * What the hook process does: print `stdout` (one JSON line) and exit 0, or print nothing on stdout,
 * `stderr` as the reason, and exit 2. Claude Code acts on the JSON only on exit 0, blocks on exit 2
 * (stderr goes to Claude), and treats every other exit as a non-blocking error — the tool runs.
 */
export interface HookReply {
  exitCode: 0 | 2;
  stdout?: JsonObject;
  stderr?: string;
}

/** How the host running the hook describes the agent, beside what the event itself says. */
export interface HookCallContext {
  identity?: string | undefined;
  riskClass?: string | undefined;
  /** Provenance of the model's arguments (`--arg-source`); default `tool_output`, as the MCP proxy's. */
  argSource?: string | undefined;
  /** The workspace when the event has no `cwd` (the CLI hook's own directory; none on the daemon). */
  defaultWorkspace?: string | undefined;
}

/**
 * The decision request a host makes of an event: the payload, the decision service's adapter that
 * decodes it, and what the hook adds to the decoded call (the service's `DecisionRequest` accepts it).
 */
export interface HookDecisionRequest {
  payload: JsonObject;
  adapter: 'mcp' | 'claude_code';
  enrichCall: (call: ToolCall) => void;
}

/** What a host's reply reads of a decision (the decision service's `DecisionResult` has it). */
export interface HookDecision {
  verdict: Verdict;
  reasonCodes: readonly string[];
  intentDigest: string;
  /** The decision object; the reply names its `trace_id`. */
  output: JsonObject;
}

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
  request(payload: JsonObject, context: HookCallContext): HookDecisionRequest;
  reply(event: string, result: HookDecision): HookReply;
  /** Neutral reply for an event Ward does not decide; `message` (a broken hook command) is shown to the user. */
  pass(event: string, message?: string): HookReply;
  /** The deny when the call cannot be decided; `event` undefined when none could be read. */
  fail(event: string | undefined, message: string): HookReply;
  /** The reply as the endpoint's response body. */
  httpBody(reply: HookReply): JsonObject;
}
