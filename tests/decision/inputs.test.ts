import { describe, expect, it } from 'vitest';
import { ERROR_CODES, isWardError } from '../../src/errors.js';
import { readFileSync } from 'node:fs';
import { envelopeOf, inputsRequired, loadEnvelope, loadKillSwitch, loadKillSwitchAsync, loadWrkr } from '../../src/decision/inputs.js';
import { fixture } from '../cli/run.js';

const STATE = JSON.stringify({ schema_id: 'gait.gate.kill_switch_state', schema_version: '1.0.0', entries: [] });
const missing = () => {
  throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
};

describe('decision inputs and their fail-closed fallbacks', () => {
  it('required: oss-prod or a high or critical risk class', () => {
    expect(inputsRequired('oss-prod', 'low')).toBe(true);
    expect(inputsRequired('standard', 'high')).toBe(true);
    expect(inputsRequired('standard', 'critical')).toBe(true);
    expect(inputsRequired('standard', 'medium')).toBe(false);
  });

  it('a kill switch that loads is used', () => {
    expect(loadKillSwitch(() => STATE, { required: false, path: 'ks.json' })).toHaveProperty('state');
  });

  it('an unreadable or invalid kill switch is unavailable when required, and says why', () => {
    const heard: string[] = [];
    const opts = { required: true, path: 'ks.json', onUnavailable: (e: Error) => heard.push(e.message) };
    expect(loadKillSwitch(missing, opts)).toEqual({ unavailable: true });
    expect(loadKillSwitch(() => '{"entries": 1}', opts)).toEqual({ unavailable: true });
    expect(heard).toHaveLength(2);
  });

  it('otherwise it is an error: a coded one as it is, any other as kill_switch_invalid naming the path', async () => {
    const opts = { required: false, path: 'ks.json' };
    expect(() => loadKillSwitch(missing, opts)).toThrow(/read kill switch state ks\.json: ENOENT/);
    try {
      loadKillSwitch(() => '{"entries": 1}', opts);
      expect.unreachable();
    } catch (err) {
      expect(isWardError(err) && err.code).toBe(ERROR_CODES.KILL_SWITCH_INVALID);
    }
    await expect(loadKillSwitchAsync(async () => missing(), opts)).rejects.toThrow(/ks\.json/);
    await expect(loadKillSwitchAsync(async () => missing(), { ...opts, required: true })).resolves.toEqual({ unavailable: true });
  });

  it('an unavailable Wrkr inventory stops a required decision and only warns otherwise', async () => {
    const warnings: string[] = [];
    await expect(loadWrkr(async () => 'not json', 'w.json', true, warnings)).rejects.toThrow(/wrkr inventory unavailable in fail-closed mode/);
    await expect(loadWrkr(async () => 'not json', 'w.json', false, warnings)).resolves.toBeUndefined();
    expect(warnings).toEqual(['wrkr inventory unavailable; continuing without context enrichment']);
    await expect(loadWrkr(async () => '[]', 'w.json', false, [])).resolves.toMatchObject({ source: 'w.json' });
  });

  it('one envelope loader for every host: verified with its JSON; a coded error as it is, any other ERR_ENVELOPE_INVALID naming the path', async () => {
    const text = readFileSync(fixture('envelopes/v7-envelope.json'), 'utf8');
    const loaded = await loadEnvelope(async () => text, 'env.json');
    expect(loaded.envelope.context_set_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(loaded.json).toEqual(JSON.parse(text));
    expect(envelopeOf(text, 'env.json')).toEqual(loaded);
    const codeOf = async (p: Promise<unknown>) => p.then(() => 'loaded', (e: unknown) => (isWardError(e) ? `${e.code}: ${e.message}` : String(e)));
    expect(await codeOf(loadEnvelope(async () => text, 'https://example.com/env.json'))).toBe(`${ERROR_CODES.USAGE}: context envelope path must be a local filesystem path`);
    expect(await codeOf(loadEnvelope(async () => '{"records": [', 'env.json'))).toMatch(new RegExp(`^${ERROR_CODES.ENVELOPE_INVALID}: parse context envelope: `));
    expect(await codeOf(loadEnvelope(() => Promise.reject(new Error('device not ready')), 'env.json'))).toBe(`${ERROR_CODES.ENVELOPE_INVALID}: context envelope env.json: device not ready`);
  });
});
