import { describe, expect, it } from 'vitest';
import { HostResolver, resolveIntentHosts, systemLookup } from '../../src/decision/host-resolution.js';
import { abandonedHostLookups } from '../../src/decision/pending-lookups.js';
import { parseRFC3339 } from '../../src/canon/index.js';
import { normalizeIntent } from '../../src/intent/normalize.js';
import { parsePolicyYaml } from '../../src/policy/load.js';
import { replayOne, type ReplayOptions } from '../../src/regress/replay/replay.js';
import { recordFromCapture } from '../../src/regress/replay/sources.js';
import type { ReplayRecord } from '../../src/regress/replay/types.js';
import { buildDecisionCapture, captureFileText, parseDecisionCapture } from '../../src/trace/capture.js';

const DENY_METADATA = parsePolicyYaml(
  'default_verdict: allow\nrules: [{ name: net, effect: allow, match: { tool_names: [http.get] }, endpoint: { domain_denylist: [class:metadata] } }]',
).policy;
const DENY_NAMES = parsePolicyYaml(
  'default_verdict: allow\nrules: [{ name: net, effect: allow, match: { tool_names: [http.get] }, endpoint: { domain_denylist: [pastebin.com] } }]',
).policy;

const call = (...urls: string[]) => ({
  tool_name: 'http.get',
  args: {},
  targets: urls.map((value) => ({ kind: 'url', value, operation: 'read' })),
  arg_provenance: [],
  context: { identity: 'a', workspace: '/w', risk_class: 'low' },
});

describe('HostResolver', () => {
  it('resolves with the injected lookup, in canonical form, and caches answers for the TTL', async () => {
    const asked: string[] = [];
    let clock = 0;
    const r = new HostResolver({
      lookup: async (name) => {
        asked.push(name);
        return name === '169.254.169.254.nip.io' ? ['169.254.169.254', '::ffff:169.254.169.254'] : ['2001:DB8:0:0::1'];
      },
      ttlMs: 1000,
      now: () => clock,
    });
    const first = await r.resolve(['169.254.169.254.nip.io', 'v6.example']);
    expect(Object.fromEntries(first)).toEqual({ '169.254.169.254.nip.io': { addresses: ['169.254.169.254'] }, 'v6.example': { addresses: ['2001:db8::1'] } });
    await r.resolve(['169.254.169.254.nip.io']);
    expect(asked).toEqual(['169.254.169.254.nip.io', 'v6.example']);
    clock = 1001;
    await r.resolve(['169.254.169.254.nip.io']);
    expect(asked).toEqual(['169.254.169.254.nip.io', 'v6.example', '169.254.169.254.nip.io']);
  });

  it('bounds every lookup: a resolver that never answers is a failure after timeoutMs', async () => {
    const r = new HostResolver({ lookup: () => new Promise(() => undefined), timeoutMs: 50 });
    const started = Date.now();
    const got = await r.resolve(['slow.example']);
    expect(got.get('slow.example')).toEqual({ error: 'no answer within 50 ms' });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('counts a timed-out lookup as abandoned until it settles (a one-shot CLI then exits without waiting for it)', async () => {
    let answer: (a: string[]) => void = () => undefined;
    const before = abandonedHostLookups();
    const r = new HostResolver({ lookup: () => new Promise((resolve) => (answer = resolve)), timeoutMs: 20 });
    expect((await r.resolve(['late.example'])).get('late.example')).toEqual({ error: 'no answer within 20 ms' });
    expect(abandonedHostLookups()).toBe(before + 1);
    answer(['10.0.0.1']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(abandonedHostLookups()).toBe(before);
  });

  it('reports failures, empty answers and non-addresses as errors, never as addresses', async () => {
    const r = new HostResolver({
      lookup: async (name) => {
        if (name === 'gone.example') throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
        if (name === 'empty.example') return [];
        return ['not-an-address.example'];
      },
    });
    const got = await r.resolve(['gone.example', 'empty.example', 'odd.example']);
    expect(got.get('gone.example')).toEqual({ error: 'ENOTFOUND' });
    expect(got.get('empty.example')).toEqual({ error: 'no addresses' });
    expect(got.get('odd.example')).toMatchObject({ error: expect.stringMatching(/not an address/) });
  });

  it('one lookup serves concurrent requests for the same name', async () => {
    let calls = 0;
    const r = new HostResolver({ lookup: async () => (calls++, ['10.0.0.1']) });
    await Promise.all([r.resolve(['a.example']), r.resolve(['a.example']), r.resolve(['a.example'])]);
    expect(calls).toBe(1);
  });

  it('the system resolver resolves localhost to a loopback address', async () => {
    const addresses = await systemLookup('localhost');
    expect(addresses.some((a) => a === '127.0.0.1' || a === '::1')).toBe(true);
  });
});

describe('resolveIntentHosts', () => {
  it('resolves nothing when no domain list names an address, range or class', async () => {
    const r = new HostResolver({ lookup: async () => { throw new Error('must not be asked'); } });
    expect(await resolveIntentHosts(DENY_NAMES, [call('http://example.com/')], r)).toBeUndefined();
  });

  it('resolves every host name of every reading, and no address', async () => {
    const asked: string[] = [];
    const r = new HostResolver({ lookup: async (name) => (asked.push(name), ['93.184.216.34']) });
    const got = await resolveIntentHosts(DENY_METADATA, [call('http://A.example./x', 'http://10.0.0.1/'), call('http://b.example/'), { not: 'an intent' }], r);
    expect([...got!.keys()].sort()).toEqual(['a.example', 'b.example']);
    expect(asked.sort()).toEqual(['a.example', 'b.example']);
  });
});

describe('captures and replay keep the resolution', () => {
  it('a capture records resolved_hosts, and replay judges the name by them without the network', () => {
    const loaded = parsePolicyYaml(
      'default_verdict: allow\nrules: [{ name: net, effect: allow, match: { tool_names: [http.get] }, endpoint: { domain_denylist: [class:metadata] } }]',
    );
    const resolved = new Map([['169.254.169.254.nip.io', { addresses: ['169.254.169.254'] }]]);
    const trace = { trace_id: 'a'.repeat(24), event_id: 'b'.repeat(24), policy_digest: loaded.digest, intent_digest: 'c'.repeat(64), tool_name: 'http.get', verdict: 'block', reason_codes: [], matched_rule: 'net' };
    const capture = (resolvedHosts: typeof resolved | undefined) =>
      captureFileText(
        buildDecisionCapture({
          trace: trace as never,
          evaluationTime: parseRFC3339('2026-03-12T12:00:00Z'),
          intent: normalizeIntent(call('http://169.254.169.254.nip.io/')),
          intentError: undefined,
          contextEnvelope: undefined,
          resolvedHosts,
        }),
      );
    const text = capture(resolved);
    expect(JSON.parse(text).resolved_hosts).toEqual({ '169.254.169.254.nip.io': { addresses: ['169.254.169.254'] } });
    expect([...parseDecisionCapture(text).resolved_hosts!]).toEqual([...resolved]);
    const replayed = (t: string) => replayOne(recordFromCapture(t, 'test') as ReplayRecord, { candidate: loaded } as ReplayOptions).candidate;
    expect(replayed(text)).toMatchObject({ verdict: 'block', reason_codes: expect.arrayContaining(['endpoint_resolved_address_denied']) });
    // The control: the same capture without the recorded resolution is judged by the name's text.
    expect(JSON.parse(capture(undefined)).resolved_hosts).toBeUndefined();
    expect(replayed(capture(undefined)).verdict).toBe('allow');
    expect(() => parseDecisionCapture(text.replace('"addresses"', '"addrs"'))).toThrow(/resolved_hosts/);
  });
});
