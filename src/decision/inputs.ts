import { parseJsonText, type JsonObject } from '../canon/json.js';
import { parseContextEnvelope, type ContextEnvelope } from '../context/index.js';
import { ERROR_CODES, WardError, isWardError } from '../errors.js';
import { parseKillSwitchState, type KillSwitchState } from '../gate/kill-switch.js';
import { parseWrkrInventory, type WrkrInventory } from '../gate/wrkr.js';

/*
 * A decision's per-call inputs and what happens when one cannot be loaded (`gate.md` §3.6 step 0,
 * §3.8; `mcp-decision-service.md` §6.3 step 3). Hosts say where the text comes from (a file, standard
 * input); the fallbacks are decided here, once:
 * - kill switch: unreadable or invalid state is `unavailable` (which blocks) when it is required —
 *   oss-prod, a high or critical risk class, or a long-running host that watches the file — and an
 *   error otherwise;
 * - Wrkr inventory: fatal when required (exit 3), otherwise the decision continues unenriched with
 *   a warning;
 * - context envelope: always fatal (exit 6); a boundary that was given one never decides without it.
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

/** The verified envelope, and its JSON as given (what a decision capture keeps). */
export async function loadEnvelope(read: () => Promise<string>, path: string): Promise<{ envelope: ContextEnvelope; json: JsonObject }> {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) {
    throw new WardError(ERROR_CODES.USAGE, 'context envelope path must be a local filesystem path');
  }
  try {
    const text = await read();
    const envelope = parseContextEnvelope(text);
    return { envelope, json: parseJsonText(text) as JsonObject };
  } catch (err) {
    if (isWardError(err)) throw err;
    throw new WardError(ERROR_CODES.ENVELOPE_INVALID, (err as Error).message);
  }
}
