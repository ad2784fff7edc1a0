import { describe, expect, it } from 'vitest';
import { ERROR_CODES, WardError } from '../../src/errors.js';
import { enrichWithWrkr, parseWrkrInventory, type WrkrInventory } from '../../src/gate/wrkr.js';
import { fixture } from '../context/helpers.js';

function inventoryError(text: string): WardError {
  try {
    parseWrkrInventory(text);
  } catch (err) {
    expect(err).toBeInstanceOf(WardError);
    expect((err as WardError).code).toBe(ERROR_CODES.WRKR_INVENTORY_INVALID);
    expect((err as WardError).exitCode).toBe(6);
    return err as WardError;
  }
  throw new Error('expected the inventory to be rejected');
}

function inventory(): WrkrInventory {
  return parseWrkrInventory(fixture('wrkr/inventory.json'));
}

describe('parseWrkrInventory (gate.md §3.5)', () => {
  it('reads a JSON array, trimming and lowercasing every value and ignoring extra keys', () => {
    const inv = inventory();
    expect([...inv.entries.keys()]).toEqual(['tool.write', 'mcp/files.delete']);
    expect(inv.entries.get('tool.write')).toEqual({
      tool_name: 'tool.write',
      data_class: 'pii',
      endpoint_class: 'fs.write',
      autonomy_level: 'supervised',
    });
    expect(inv.entries.get('mcp/files.delete')).not.toHaveProperty('owner');
  });

  it('reads an {"items": [...]} document and collapses identical repeats', () => {
    const inv = parseWrkrInventory(fixture('wrkr/inventory-items.json'));
    expect([...inv.entries.keys()]).toEqual(['tool.write', 'tool.search']);
  });

  it('accepts an explicitly empty inventory', () => {
    expect(parseWrkrInventory('[]').entries.size).toBe(0);
    expect(parseWrkrInventory('{"items":[]}').entries.size).toBe(0);
  });

  it('fails closed on entries that classify the same tool differently', () => {
    expect(inventoryError(fixture('wrkr/conflicting.json')).message).toBe(
      'parse wrkr inventory: conflicting entries for tool_name "tool.write"',
    );
  });

  it('rejects an object without an items array instead of treating it as empty', () => {
    const message = 'parse wrkr inventory: inventory must be a JSON array or an object with an "items" array';
    expect(inventoryError(fixture('wrkr/wrong-wrapper.json')).message).toBe(message);
    expect(inventoryError('{"items":null}').message).toBe(message);
    expect(inventoryError('"tool.write"').message).toBe(message);
  });

  it('rejects items that are not objects, lack a tool_name, or carry non-string values', () => {
    expect(inventoryError('[1]').message).toBe('parse wrkr inventory: items[0] must be a JSON object');
    expect(inventoryError('[{"tool_name":"a"},{"data_class":"pii"}]').message).toBe(
      'parse wrkr inventory: items[1].tool_name is required',
    );
    expect(inventoryError('[{"tool_name":"  "}]').message).toBe('parse wrkr inventory: items[0].tool_name is required');
    expect(inventoryError('[{"tool_name":"a","data_class":3}]').message).toBe(
      'parse wrkr inventory: json: cannot unmarshal number into Go struct field InventoryItem.data_class of type string',
    );
  });

  it('rejects malformed JSON', () => {
    expect(inventoryError('[{').message).toMatch(/^parse wrkr inventory: /);
  });
});

describe('enrichWithWrkr', () => {
  it('sets the four wrkr.* keys when the lowercased tool name is listed', () => {
    const result = enrichWithWrkr({ tenant: 't1' }, 'Tool.Write', inventory());
    expect(result.applied).toBe(true);
    expect(result.authContext).toEqual({
      tenant: 't1',
      'wrkr.tool_name': 'tool.write',
      'wrkr.data_class': 'pii',
      'wrkr.endpoint_class': 'fs.write',
      'wrkr.autonomy_level': 'supervised',
    });
  });

  it('creates auth_context when the intent had none', () => {
    const result = enrichWithWrkr(undefined, 'mcp/files.delete', inventory());
    expect(result.authContext).toEqual({
      'wrkr.tool_name': 'mcp/files.delete',
      'wrkr.data_class': 'internal',
      'wrkr.endpoint_class': 'fs.delete',
      'wrkr.autonomy_level': 'autonomous',
    });
  });

  it('overwrites claimed wrkr.* values, even with an empty class from the inventory', () => {
    const inv = parseWrkrInventory('[{"tool_name":"tool.write","data_class":"pii"}]');
    const claimed = { 'wrkr.data_class': 'public', 'wrkr.endpoint_class': 'fs.read', 'wrkr.autonomy_level': 'manual' };
    const result = enrichWithWrkr(claimed, 'tool.write', inv);
    expect(result.authContext).toEqual({
      'wrkr.tool_name': 'tool.write',
      'wrkr.data_class': 'pii',
      'wrkr.endpoint_class': '',
      'wrkr.autonomy_level': '',
    });
  });

  it('leaves auth_context (and any claims) untouched for tools the inventory does not list', () => {
    const auth = { 'wrkr.data_class': 'public' };
    const result = enrichWithWrkr(auth, 'tool.read', inventory());
    expect(result.applied).toBe(false);
    expect(result.authContext).toBe(auth);
    expect(enrichWithWrkr(undefined, 'tool.read', inventory())).toEqual({ authContext: undefined, applied: false });
  });

  it('does not mutate the input auth_context', () => {
    const auth = { tenant: 't1', 'wrkr.data_class': 'public' };
    const result = enrichWithWrkr(auth, 'tool.write', inventory());
    expect(auth).toEqual({ tenant: 't1', 'wrkr.data_class': 'public' });
    expect(result.authContext).not.toBe(auth);
  });
});
