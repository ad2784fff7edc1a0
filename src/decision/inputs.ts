import { nowUTC, parseJsonText, type JsonObject, type JsonValue } from '../canon/index.js';
import { parseContextEnvelope, type ContextEnvelope } from '../context/index.js';
import { ERROR_CODES, WardError, isWardError } from '../errors.js';
import { parseKillSwitchState, type KillSwitchState } from '../gate/kill-switch.js';
import { parseWrkrInventory, type WrkrInventory } from '../gate/wrkr.js';
import type { VerifyKey } from '../keys/index.js';
import type { NormalizedPolicy } from '../policy/types.js';
import { verifyApprovedScriptRegistry, type ApprovedScriptEntry } from '../tokens/index.js';

/*
 * A decision's per-call inputs and what happens when one cannot be loaded (`gate.md` §3.6 step 0,
 * §3.8; `mcp-decision-service.md` §6.3 step 3). Hosts say where the text comes from (a file, standard
 * input); the fallbacks are decided here, once:
 * - kill switch: unreadable or invalid state is `unavailable` (which blocks) when it is required —
 *   oss-prod, a high or critical risk class, or a long-running host that watches the file — and an
 *   error otherwise;
 * - Wrkr inventory: fatal when required (exit 3), otherwise the decision continues unenriched with
 *   a warning;
 * - context envelope: always fatal (exit 6); a boundary that was given one never decides without it;
 * - approved-script registry: used only when every entry verifies; otherwise fatal when required
 *   (exit 3, no trace), else the fast path is off with a warning and the policy decides.
 */

export type KillSwitchInput = { state: KillSwitchState } | { unavailable: true };
export type WrkrInput = { inventory: WrkrInventory; source: string };
export type TextSource = () => string;

/** Whether the fail-closed inputs are required: the oss-prod profile or a high or critical risk class. */
export function inputsRequired(profile: string, riskClass: string): boolean {
  return profile === 'oss-prod' || riskClass === 'high' || riskClass === 'critical';
}

/** The one kill-switch loader. `onUnavailable` hears why a required state fell back to `unavailable`. */
export function loadKillSwitch(read: TextSource, opts: KillSwitchOptions): KillSwitchInput {
  let text: string;
  try {
    text = read();
  } catch (err) {
    return killSwitchUnavailable(err, opts);
  }
  return parseKillSwitch(text, opts);
}

/** The same, for a source that must be awaited (`--kill-switch-state -`). */
export async function loadKillSwitchAsync(read: () => Promise<string>, opts: KillSwitchOptions): Promise<KillSwitchInput> {
  let text: string;
  try {
    text = await read();
  } catch (err) {
    return killSwitchUnavailable(err, opts);
  }
  return parseKillSwitch(text, opts);
}

export interface KillSwitchOptions {
  required: boolean;
  /** The path as given, for the error when the state is not required. */
  path: string;
  onUnavailable?: (err: Error) => void;
}

function parseKillSwitch(text: string, opts: KillSwitchOptions): KillSwitchInput {
  try {
    return { state: parseKillSwitchState(text) };
  } catch (err) {
    return killSwitchUnavailable(err, opts);
  }
}

function killSwitchUnavailable(err: unknown, opts: KillSwitchOptions): KillSwitchInput {
  if (opts.required) {
    opts.onUnavailable?.(err as Error);
    return { unavailable: true };
  }
  if (isWardError(err)) throw err;
  throw new WardError(ERROR_CODES.KILL_SWITCH_INVALID, `read kill switch state ${opts.path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
}

/** A Wrkr inventory, or undefined (with a warning) when it is unavailable and not required. */
export async function loadWrkr(read: () => Promise<string>, source: string, required: boolean, warnings: string[]): Promise<WrkrInput | undefined> {
  try {
    return { inventory: parseWrkrInventory(await read()), source };
  } catch (err) {
    if (required) {
      throw new WardError(ERROR_CODES.FAIL_CLOSED_DEPENDENCY, `wrkr inventory unavailable in fail-closed mode: ${(err as Error).message}`);
    }
    warnings.push('wrkr inventory unavailable; continuing without context enrichment');
    return undefined;
  }
}

/**
 * The verified envelope, and its JSON as given (what a decision capture keeps). Every host that
 * takes an envelope file reads it here: `read` is how it reads the path (the CLI's size-limited
 * input, the decision service's working directory).
 */
export async function loadEnvelope(read: () => Promise<string>, path: string): Promise<{ envelope: ContextEnvelope; json: JsonObject }> {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) {
    throw new WardError(ERROR_CODES.USAGE, 'context envelope path must be a local filesystem path');
  }
  const text = await read().catch((err: unknown) => {
    throw invalidEnvelope(err, path);
  });
  return envelopeOf(text, path);
}

/** `loadEnvelope` for text already read (the decision service reads its envelope synchronously at startup). */
export function envelopeOf(text: string, path: string): { envelope: ContextEnvelope; json: JsonObject } {
  try {
    const envelope = parseContextEnvelope(text);
    return { envelope, json: parseJsonText(text) as JsonObject };
  } catch (err) {
    throw invalidEnvelope(err, path);
  }
}

/** A `WardError` keeps its code and message; anything else is an invalid envelope, named by its path. */
function invalidEnvelope(err: unknown, path: string): WardError {
  if (isWardError(err)) return err;
  return new WardError(ERROR_CODES.ENVELOPE_INVALID, `context envelope ${path}: ${(err as Error).message}`, {
    hint: 'fix or regenerate the envelope; nothing is decided with an envelope that does not verify',
  });
}

/** Where the approved-script registry and its verify keys come from (either may throw: unavailable). */
export interface ApprovedScriptSources {
  registry: () => JsonValue;
  verifyKeys: () => readonly VerifyKey[];
}

/**
 * §3.6 step 1: the verified registry entries, or undefined when the fast path is off. A policy that
 * requires context evidence turns it off (the fast path would skip that check).
 */
export function loadApprovedScriptRegistry(
  sources: ApprovedScriptSources,
  policy: NormalizedPolicy,
  required: boolean,
  warnings: string[],
): ApprovedScriptEntry[] | undefined {
  if (requiresContextEvidence(policy)) {
    warnings.push('approved script fast-path disabled because policy requires authenticated context evidence');
    return undefined;
  }
  const unavailable = (message: string, requiredMessage: string): undefined => {
    if (required) throw new WardError(ERROR_CODES.FAIL_CLOSED_DEPENDENCY, requiredMessage);
    warnings.push(`approved script fast-path disabled: ${message}`);
    return undefined;
  };
  let registry: JsonValue;
  let keys: readonly VerifyKey[];
  try {
    registry = sources.registry();
    keys = sources.verifyKeys();
  } catch (err) {
    const message = (err as Error).message;
    return unavailable(message, `approved script registry unavailable in fail-closed mode: ${message}`);
  }
  try {
    return verifyApprovedScriptRegistry(registry, keys, nowUTC());
  } catch (err) {
    const message = (err as Error).message;
    return unavailable(message, message);
  }
}

function requiresContextEvidence(policy: NormalizedPolicy): boolean {
  return (
    policy.fail_closed.required_fields.includes('context_evidence') ||
    policy.rules.some((r) => r.require_context_evidence || r.required_context_evidence_mode === 'required' || r.max_context_age_seconds > 0)
  );
}
