import { goLower, goTrim, isJsonObject, type JsonObject, type JsonValue } from '../canon/index.js';
import { decodeError, decodeJsonText, readString, type Decoder } from '../context/index.js';
import { ERROR_CODES } from '../errors.js';

/*
 * Wrkr enrichment (`gate.md` §3.5, ContextSpec v1): a local inventory classifies tools, and the
 * gate writes that classification into `auth_context` so policies can match it with
 * `context_tool_names`, `context_data_classes`, `context_endpoint_classes` and
 * `context_autonomy_levels`. The keys are flat strings containing a dot (`auth_context["wrkr.tool_name"]`),
 * which is what the policy matcher reads (`gate.md` §2.4).
 */

export const WRKR_TOOL_NAME_KEY = 'wrkr.tool_name';
export const WRKR_DATA_CLASS_KEY = 'wrkr.data_class';
export const WRKR_ENDPOINT_CLASS_KEY = 'wrkr.endpoint_class';
export const WRKR_AUTONOMY_LEVEL_KEY = 'wrkr.autonomy_level';

export interface WrkrInventoryEntry {
  readonly tool_name: string;
  readonly data_class: string;
  readonly endpoint_class: string;
  readonly autonomy_level: string;
}

export interface WrkrInventory {
  /** Keyed by the lowercased tool name. */
  readonly entries: ReadonlyMap<string, WrkrInventoryEntry>;
}

const DECODER: Decoder = { prefix: 'parse wrkr inventory: ', root: 'InventoryItem', code: ERROR_CODES.WRKR_INVENTORY_INVALID };

/**
 * Parse an inventory: a JSON array of items, or an object whose `items` is that array. Each item
 * is `{tool_name, data_class, endpoint_class, autonomy_level}`; values are trimmed and lowercased.
 * Unknown keys in items are ignored (Wrkr writes more than these four). Fails closed:
 *  - an object without an `items` array is an error (not an empty inventory), so a misspelled
 *    wrapper cannot silently disable enrichment;
 *  - every item needs a non-empty `tool_name`;
 *  - two items for the same tool must agree. Identical repeats are harmless and collapse; items
 *    that classify one tool differently are an error, because picking either one would let file
 *    order decide a security classification.
 */
export function parseWrkrInventory(text: string): WrkrInventory {
  const root = decodeJsonText(DECODER, text);
  const items = inventoryItems(root);
  const entries = new Map<string, WrkrInventoryEntry>();
  items.forEach((item, index) => {
    if (!isJsonObject(item)) throw decodeError(DECODER, `items[${index}] must be a JSON object`);
    const entry: WrkrInventoryEntry = Object.freeze({
      tool_name: normalizeValue(readString(DECODER, item, 'tool_name')),
      data_class: normalizeValue(readString(DECODER, item, 'data_class')),
      endpoint_class: normalizeValue(readString(DECODER, item, 'endpoint_class')),
      autonomy_level: normalizeValue(readString(DECODER, item, 'autonomy_level')),
    });
    if (entry.tool_name === '') throw decodeError(DECODER, `items[${index}].tool_name is required`);
    const previous = entries.get(entry.tool_name);
    if (previous && !sameEntry(previous, entry)) {
      throw decodeError(DECODER, `conflicting entries for tool_name ${JSON.stringify(entry.tool_name)}`);
    }
    entries.set(entry.tool_name, entry);
  });
  return Object.freeze({ entries });
}

function inventoryItems(root: JsonValue): JsonValue[] {
  if (Array.isArray(root)) return root;
  if (isJsonObject(root) && Array.isArray(root['items'])) return root['items'];
  throw decodeError(DECODER, 'inventory must be a JSON array or an object with an "items" array');
}

function normalizeValue(value: string): string {
  return goLower(goTrim(value));
}

function sameEntry(a: WrkrInventoryEntry, b: WrkrInventoryEntry): boolean {
  return a.data_class === b.data_class && a.endpoint_class === b.endpoint_class && a.autonomy_level === b.autonomy_level;
}

export interface WrkrEnrichment {
  /** The new auth_context when applied (a copy), else the input unchanged. */
  authContext: JsonObject | undefined;
  applied: boolean;
}

/**
 * When the lowercased tool name is in the inventory, return a copy of `authContext` with the four
 * `wrkr.*` keys set from the inventory. They overwrite whatever the caller claimed, including with
 * "" when the inventory leaves a class empty, so a claim can never survive next to real data.
 * Otherwise the input is returned as is: claims of tools the inventory does not list are kept, as
 * the reference keeps them (`gate.md` §2.4 note).
 */
export function enrichWithWrkr(
  authContext: JsonObject | undefined,
  toolName: string,
  inventory: WrkrInventory,
): WrkrEnrichment {
  const entry = inventory.entries.get(goLower(goTrim(toolName)));
  if (entry === undefined) return { authContext, applied: false };
  return {
    authContext: {
      ...authContext,
      [WRKR_TOOL_NAME_KEY]: entry.tool_name,
      [WRKR_DATA_CLASS_KEY]: entry.data_class,
      [WRKR_ENDPOINT_CLASS_KEY]: entry.endpoint_class,
      [WRKR_AUTONOMY_LEVEL_KEY]: entry.autonomy_level,
    },
    applied: true,
  };
}
