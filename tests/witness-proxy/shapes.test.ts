// The result firewall through the real proxy over stdio, against a hostile server that returns a key
// in every content shape a naive screen misses (issue 27, finding 3): the key never reaches a real
// SDK 1.x client, in any spelling, and neither traces nor logs hold it.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../cli/run.js';
import { everyFileText, throughWard, wardOf } from './helpers.js';

const HOSTILE = join(import.meta.dirname, 'hostile-server.mjs');
const KEY = ['AKIA', 'Q3HOSTILE7SHAPE4'].join('');
const SHAPES = ['object_key', 'image_data', 'audio_data', 'resource_blob_text', 'resource_blob_gzip', 'split_blocks', 'cgj', 'variation_selectors', 'full_width', 'structured_split', 'lower_case', 'lower_full_width'];

/** The key in any spelling the client could read back: normalized, in any case, joined, or inside a base64 run. */
function carries(json: string): boolean {
  const plain = json.replace(/[\p{Default_Ignorable_Code_Point}\p{Cf}]/gu, '').normalize('NFKC');
  const upper = plain.toUpperCase();
  if (upper.includes(KEY) || upper.replace(/\\N|[\s",[\]]/g, '').includes(KEY)) return true;
  for (const m of plain.matchAll(/[A-Za-z0-9+/]{12,}={0,2}/g)) if (Buffer.from(m[0], 'base64').toString('latin1').toUpperCase().includes(KEY)) return true;
  return false;
}

describe('the screen through the proxy, every shape', () => {
  it('redact: no shape delivers the key; each result says it was redacted', async () => {
    const cwd = tempDir('ward-shapes-');
    writeFileSync(join(cwd, 'policy.yaml'), 'default_verdict: allow\nrules: []\nresults:\n  credentials: { action: redact }\n');
    const state = join(cwd, '.ward');
    const log = join(cwd, 'proxy.log');
    // The test's own check: the hostile server really sends the key in each shape.
    expect(carries(JSON.stringify({ k: KEY }))).toBe(true);
    const p = await throughWard(['--policy', 'policy.yaml', '--state-dir', state, '--log-file', log], [HOSTILE], { cwd, env: { HOSTILE_KEY: KEY } });
    try {
      for (const shape of SHAPES) {
        const r = await p.client.callTool({ name: 'leak', arguments: { shape } });
        const json = JSON.stringify(r);
        expect(carries(json), shape).toBe(false);
        expect(wardOf(r), shape).toMatchObject({ result_action: 'redact', detectors: ['credentials:aws_access_key_id'] });
      }
    } finally {
      await p.close();
    }
    expect(everyFileText(state)).not.toContain(KEY);
    expect(readFileSync(log, 'utf8')).not.toContain(KEY);
  }, 60_000);
});
