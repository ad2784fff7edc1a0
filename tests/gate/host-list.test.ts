import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parsePolicyYaml } from '../../src/policy/load.js';
import type { ResolvedHosts } from '../../src/intent/address.js';
import { decide, intent } from './helpers.js';

/*
 * Host lists name classes and ranges, and a denylist naming a loopback or metadata host denies
 * its whole class (issue 26, finding 4). Decisions are checked through evaluate(), the way every
 * host decides.
 */

const policy = (endpoint: string) =>
  `default_verdict: allow\nfail_closed: { enabled: true, risk_classes: [high] }\nrules: [{ name: net, effect: allow, match: { tool_names: [http.get] }, endpoint: { ${endpoint} } }]`;

function verdict(endpoint: string, url: string, opts: { risk?: string; resolved?: ResolvedHosts } = {}): string {
  const o = decide(
    policy(endpoint),
    intent({ tool_name: 'http.get', args: { url }, targets: [{ kind: 'url', value: url, operation: 'read' }] }, { risk_class: opts.risk ?? 'low' }),
    opts.resolved ? { resolvedHosts: opts.resolved } : {},
  );
  return `${o.verdict} ${o.reasonCodes.filter((c) => c.startsWith('endpoint_') && c !== 'endpoint_constraint_violation').join(',')}`.trim();
}

const LOOPBACK_SPELLINGS = [
  'http://0/',
  'http://0:8080/x',
  'http://0.0.0.0/',
  'http://[::]/',
  'http://127.0.0.2/',
  'http://127.1/',
  'http://2130706433/',
  'http://0x7f000001/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::1]/',
  'http://localhost/',
  'http://foo.localhost./',
];

describe('host lists: classes, ranges, literal widening', () => {
  it('a denylist of 127.0.0.1, localhost or ::1 denies every loopback spelling, one entry at a time', () => {
    for (const entry of ['"127.0.0.1"', 'localhost', '"::1"', '"[::1]"', '"127.0.0.2"', '"0.0.0.0"', 'class:loopback']) {
      for (const url of LOOPBACK_SPELLINGS) {
        expect([entry, url, verdict(`domain_denylist: [${entry}]`, url)]).toEqual([entry, url, 'block endpoint_domain_denied']);
      }
      expect([entry, verdict(`domain_denylist: [${entry}]`, 'http://example.com/')]).toEqual([entry, 'allow']);
      expect([entry, verdict(`domain_denylist: [${entry}]`, 'http://10.0.0.1/')]).toEqual([entry, 'allow']);
    }
  });

  it('a denylist naming one metadata host denies the metadata class; class:metadata names them all', () => {
    const metadata = [
      'http://169.254.169.254/latest/meta-data/',
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://metadata.goog/',
      'http://instance-data/',
      'http://[fd00:ec2::254]/',
      'http://169.254.170.2/v2/credentials',
      'http://100.100.100.200/',
      'http://[::ffff:a9fe:a9fe]/',
    ];
    for (const entry of ['"169.254.169.254"', 'metadata.google.internal', 'class:metadata']) {
      for (const url of metadata) expect([entry, url, verdict(`domain_denylist: [${entry}]`, url)]).toEqual([entry, url, 'block endpoint_domain_denied']);
      expect(verdict(`domain_denylist: [${entry}]`, 'http://169.254.1.1/')).toBe('allow');
    }
  });

  it('CIDR ranges match addresses in any spelling, IPv4 inside IPv6 included', () => {
    expect(verdict('domain_denylist: ["10.0.0.0/8"]', 'http://012.1.2.3/')).toMatch(/^block endpoint_domain_denied/);
    expect(verdict('domain_denylist: ["10.0.0.0/8"]', 'http://[::ffff:a01:203]/')).toMatch(/^block endpoint_domain_denied/);
    expect(verdict('domain_denylist: ["10.0.0.0/8"]', 'http://11.0.0.1/')).toBe('allow');
    expect(verdict('domain_denylist: ["fd00::/8"]', 'http://[fd00:ec2::254]/')).toMatch(/^block endpoint_domain_denied/);
    expect(verdict('domain_denylist: [class:private, class:link_local]', 'http://192.168.1.1/')).toMatch(/^block/);
    expect(verdict('domain_denylist: [class:private, class:link_local]', 'http://[fe80::1]/')).toMatch(/^block/);
    expect(verdict('domain_denylist: [class:unspecified]', 'http://0/')).toMatch(/^block/);
    expect(verdict('domain_denylist: [class:unspecified]', 'http://127.0.0.1/')).toBe('allow');
  });

  it('allowlists allow what they spell: a literal is not widened, a class or range is what it names', () => {
    expect(verdict('domain_allowlist: ["127.0.0.1"]', 'http://127.0.0.1/')).toBe('allow');
    expect(verdict('domain_allowlist: ["127.0.0.1"]', 'http://127.0.0.2/')).toMatch(/^block endpoint_domain_not_allowlisted/);
    expect(verdict('domain_allowlist: ["127.0.0.1"]', 'http://0/')).toMatch(/^block endpoint_domain_not_allowlisted/);
    expect(verdict('domain_allowlist: [class:loopback]', 'http://0/')).toBe('allow');
    expect(verdict('domain_allowlist: ["10.0.0.0/8"]', 'http://10.9.9.9/')).toBe('allow');
    expect(verdict('domain_allowlist: ["10.0.0.0/8"]', 'http://example.com/')).toMatch(/^block endpoint_domain_not_allowlisted/);
  });

  it('refuses a policy with an unknown class or a malformed range', () => {
    expect(() => parsePolicyYaml(policy('domain_denylist: [class:intranet]'))).toThrow(/unknown address class "intranet"/);
    expect(() => parsePolicyYaml(policy('domain_allowlist: ["10.0.0.0/33"]'))).toThrow(/not a CIDR range/);
    expect(() => parsePolicyYaml(policy('domain_denylist: ["example.com/path"]'))).toThrow(/not a CIDR range/);
  });
});

describe('host lists: resolved addresses', () => {
  const resolved = (entries: Record<string, string[] | string>): ResolvedHosts =>
    new Map(Object.entries(entries).map(([name, r]) => [name, typeof r === 'string' ? { error: r } : { addresses: r }]));

  it('a name that resolves into a denied class is denied, whatever the name', () => {
    const r = resolved({ '169.254.169.254.nip.io': ['169.254.169.254'], 'evil.example': ['93.184.216.34', '127.0.0.1'], 'good.example': ['93.184.216.34'] });
    expect(verdict('domain_denylist: [class:metadata]', 'http://169.254.169.254.nip.io/', { resolved: r })).toBe('block endpoint_resolved_address_denied');
    expect(verdict('domain_denylist: [localhost]', 'http://evil.example/', { resolved: r })).toBe('block endpoint_resolved_address_denied');
    expect(verdict('domain_denylist: [localhost]', 'http://good.example/', { resolved: r })).toBe('allow');
    // Without resolution (a pure library evaluation) the name is judged by its text.
    expect(verdict('domain_denylist: [class:metadata]', 'http://169.254.169.254.nip.io/')).toBe('allow');
  });

  it('an allowlist of ranges allows a name only when every address it resolves to is in them', () => {
    const r = resolved({ 'db.internal': ['10.1.1.1'], 'split.internal': ['10.1.1.1', '8.8.8.8'] });
    expect(verdict('domain_allowlist: ["10.0.0.0/8"]', 'http://db.internal/', { resolved: r })).toBe('allow');
    expect(verdict('domain_allowlist: ["10.0.0.0/8"]', 'http://split.internal/', { resolved: r })).toMatch(/^block endpoint_domain_not_allowlisted/);
  });

  it('a name that does not resolve blocks under a fail-closed risk class, and is judged by its text otherwise', () => {
    const r = resolved({ 'gone.example': 'ENOTFOUND' });
    expect(verdict('domain_denylist: [class:metadata]', 'http://gone.example/', { resolved: r, risk: 'high' })).toBe('block endpoint_host_unresolved');
    expect(verdict('domain_denylist: [class:metadata]', 'http://gone.example/', { resolved: r, risk: 'low' })).toBe('allow');
    // A list that names no address never needs a name resolved.
    expect(verdict('domain_denylist: [pastebin.com]', 'http://gone.example/', { resolved: r, risk: 'high' })).toBe('allow');
  });
});

describe('value lists: target_values and destination_values', () => {
  it('take class: and CIDR entries for the host a target reaches; literals keep their meaning', () => {
    const rule = (values: string) =>
      `default_verdict: allow\nrules: [{ name: imds, priority: 1, effect: block, match: { target_values: ${values} } }]`;
    const run = (values: string, url: string) =>
      decide(rule(values), intent({ tool_name: 'http.get', args: { url }, targets: [{ kind: 'url', value: url, operation: 'read' }] })).verdict;
    expect(run('[class:metadata]', 'http://[::ffff:a9fe:a9fe]/latest')).toBe('block');
    expect(run('[class:metadata]', 'http://metadata.goog/')).toBe('block');
    expect(run('["169.254.0.0/16"]', 'http://169.254.1.2/')).toBe('block');
    expect(run('[class:metadata]', 'http://example.com/')).toBe('allow');
    // A literal URL in a value list is not widened to its class.
    expect(run('["http://127.0.0.1/"]', 'http://127.0.0.2/')).toBe('allow');
    expect(run('["http://127.0.0.1/"]', 'http://2130706433/')).toBe('block');
  });
});

describe('host lists: property', () => {
  /** One WHATWG spelling of an IPv4 address: per-part decimal, octal or hex, 1–4 parts, or IPv4-mapped IPv6. */
  const spelling = fc
    .record({
      bytes: fc.tuple(fc.constantFrom(127, 0), fc.nat(255), fc.nat(255), fc.nat(255)),
      radix: fc.array(fc.constantFrom(8, 10, 16), { minLength: 4, maxLength: 4 }),
      parts: fc.constantFrom(1, 2, 3, 4, 6),
      port: fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
    })
    .map(({ bytes, radix, parts, port }) => {
      const [a, b, c, d] = bytes;
      const fmt = (v: number, r: number) => (r === 8 ? `0${v.toString(8)}` : r === 16 ? `0x${v.toString(16)}` : String(v));
      const n = ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
      const host =
        parts === 1 ? fmt(n, radix[0]!)
        : parts === 2 ? `${fmt(a, radix[0]!)}.${fmt(n & 0xffffff, radix[1]!)}`
        : parts === 3 ? `${fmt(a, radix[0]!)}.${fmt(b, radix[1]!)}.${fmt((c << 8) | d, radix[2]!)}`
        : parts === 4 ? bytes.map((v, i) => fmt(v, radix[i]!)).join('.')
        : `[::ffff:${bytes.join('.')}]`;
      return `http://${host}${port === undefined ? '' : `:${port}`}/x`;
    });

  it('every spelling of every address in 127/8 and 0/8 is blocked by a denylist of 127.0.0.1, localhost or ::1', () => {
    fc.assert(
      fc.property(spelling, fc.constantFrom('"127.0.0.1"', 'localhost', '"::1"'), (url, entry) => {
        expect([url, verdict(`domain_denylist: [${entry}]`, url)]).toEqual([url, 'block endpoint_domain_denied']);
      }),
      { numRuns: 300 },
    );
  });
});
