import { describe, expect, it } from 'vitest';
import type { ResolvedHosts } from '../../src/intent/address.js';
import { policyDigest } from '../../src/policy/digest.js';
import { parsePolicyYaml } from '../../src/policy/load.js';
import { decide, intent } from './helpers.js';

/*
 * Issue 31, item 4: a domain-list entry written with a scheme means that scheme on its port (the
 * scheme's default port when none is written) in an allowlist, and the host on every scheme in a
 * denylist; an entry without a scheme keeps the reference's meaning. Checked through evaluate().
 */

const policy = (endpoint: string) =>
  `default_verdict: allow\nrules: [{ name: net, effect: allow, match: { tool_names: [http.get] }, endpoint: { ${endpoint} } }]`;

type Kind = 'url' | 'host';

function verdict(endpoint: string, value: string, opts: { kind?: Kind; resolved?: ResolvedHosts } = {}): string {
  const o = decide(
    policy(endpoint),
    intent({ tool_name: 'http.get', args: { value }, targets: [{ kind: opts.kind ?? 'url', value, operation: 'read' }] }, { risk_class: 'low' }),
    opts.resolved ? { resolvedHosts: opts.resolved } : {},
  );
  return `${o.verdict} ${o.reasonCodes.filter((c) => c.startsWith('endpoint_') && c !== 'endpoint_constraint_violation').join(',')}`.trim();
}

const ALLOW = 'allow';
const NOT_LISTED = 'block endpoint_domain_not_allowlisted';
const DENIED = 'block endpoint_domain_denied';

function table(endpoint: string, rows: [string, string, Kind?][]): void {
  for (const [value, want, kind] of rows) {
    expect([endpoint, value, verdict(endpoint, value, kind ? { kind } : {})]).toEqual([endpoint, value, want]);
  }
}

describe('allowlist entries with a scheme', () => {
  it('https://host means https on 443: another scheme or port is not allowed', () => {
    for (const entry of ['https://api.github.com', 'https://api.github.com/', 'HTTPS://API.GitHub.com', 'https://api.github.com:443']) {
      table(`domain_allowlist: ["${entry}"]`, [
        ['https://api.github.com/', ALLOW],
        ['https://api.github.com:443/repos', ALLOW],
        ['HTTPS://API.GITHUB.COM/repos', ALLOW],
        ['https://api.github.com./x', ALLOW],
        ['http://api.github.com/', NOT_LISTED],
        ['http://api.github.com:443/', NOT_LISTED],
        ['https://api.github.com:8443/', NOT_LISTED],
        ['https://api.github.com:80/', NOT_LISTED],
        ['wss://api.github.com/', NOT_LISTED],
        ['https://evil.com/', NOT_LISTED],
      ]);
    }
  });

  it('an explicit port is that port only; the default port written out is the default', () => {
    table('domain_allowlist: ["http://api.example.com:8080"]', [
      ['http://api.example.com:8080/', ALLOW],
      ['http://api.example.com/', NOT_LISTED],
      ['https://api.example.com:8080/', NOT_LISTED],
    ]);
    table('domain_allowlist: ["http://api.example.com:80", "https://api.example.com:0443"]', [
      ['http://api.example.com/', ALLOW],
      ['https://api.example.com/', ALLOW],
      ['http://api.example.com:8080/', NOT_LISTED],
    ]);
  });

  it('ws and wss have their default ports too', () => {
    table('domain_allowlist: ["wss://stream.example.com"]', [
      ['wss://stream.example.com/feed', ALLOW],
      ['wss://stream.example.com:443/feed', ALLOW],
      ['ws://stream.example.com/feed', NOT_LISTED],
      ['https://stream.example.com/', NOT_LISTED],
    ]);
  });

  it('IPv6 literals with a port, in any spelling', () => {
    table('domain_allowlist: ["https://[::1]:8443"]', [
      ['https://[::1]:8443/', ALLOW],
      ['https://[0:0:0:0:0:0:0:1]:8443/', ALLOW],
      ['https://[::1]/', NOT_LISTED],
      ['http://[::1]:8443/', NOT_LISTED],
    ]);
  });

  it('user information in the URL neither helps nor hurts: the host it reaches is what counts', () => {
    table('domain_allowlist: ["https://api.github.com"]', [
      ['https://user:secret@api.github.com/', ALLOW],
      ['https://api.github.com@evil.com/', NOT_LISTED],
      ['https://api.github.com:443@evil.com/', NOT_LISTED],
    ]);
  });

  it('a glob host under a scheme', () => {
    table('domain_allowlist: ["https://*.github.com"]', [
      ['https://api.github.com/', ALLOW],
      ['https://a.b.github.com/', ALLOW],
      ['http://api.github.com/', NOT_LISTED],
      ['https://github.com/', NOT_LISTED],
    ]);
  });

  it('a bare host target cannot be shown to be https and fails closed; a host target spelled as a URL carries its scheme', () => {
    table('domain_allowlist: ["https://api.github.com"]', [
      ['api.github.com', NOT_LISTED, 'host'],
      ['api.github.com:443', NOT_LISTED, 'host'],
      ['https://api.github.com', ALLOW, 'host'],
      ['http://api.github.com', NOT_LISTED, 'host'],
    ]);
  });

  it('a name allowed through its resolved addresses must be on the entry scheme and port too', () => {
    const resolved: ResolvedHosts = new Map([['internal.example', { addresses: ['10.0.0.1'] }]]);
    const endpoint = 'domain_allowlist: ["https://10.0.0.1", "class:private"]';
    // class:private names addresses, so the name is judged by them; the https entry alone is not enough over http.
    expect(verdict('domain_allowlist: ["https://10.0.0.1"]', 'https://internal.example/', { resolved })).toBe(ALLOW);
    expect(verdict('domain_allowlist: ["https://10.0.0.1"]', 'http://internal.example/', { resolved })).toBe(NOT_LISTED);
    expect(verdict(endpoint, 'http://internal.example/', { resolved })).toBe(ALLOW);
  });

  it('entries without a scheme keep their meaning: the host on any scheme and port', () => {
    table('domain_allowlist: ["api.github.com"]', [
      ['https://api.github.com/', ALLOW],
      ['http://api.github.com/', ALLOW],
      ['https://api.github.com:8443/', ALLOW],
      ['api.github.com', ALLOW, 'host'],
      ['https://evil.com/', NOT_LISTED],
    ]);
  });
});

describe('denylist entries with a scheme deny the host on every scheme and port', () => {
  it('https://evil.com denies http, other ports and bare host targets too', () => {
    table('domain_denylist: ["https://evil.com"]', [
      ['https://evil.com/', DENIED],
      ['http://evil.com/', DENIED],
      ['https://evil.com:8443/', DENIED],
      ['ws://evil.com/', DENIED],
      ['evil.com', DENIED, 'host'],
      ['https://good.com/', ALLOW],
    ]);
  });

  it('a loopback literal under a scheme still denies its whole class', () => {
    table('domain_denylist: ["http://127.0.0.1:8080"]', [
      ['http://localhost/', DENIED],
      ['https://[::1]:9000/', DENIED],
      ['http://example.com/', ALLOW],
    ]);
  });
});

describe('validation of entries with a scheme', () => {
  it('refuses what an origin entry cannot mean', () => {
    const bad = ['ftp://files.example.com', 'https://api.github.com/repos', 'https://u:p@api.github.com', 'https://api.github.com:0', 'https://api.github.com:65536', 'https://', 'https://:443', 'https://api.github.com?x=1', 'https://class:loopback'];
    for (const entry of bad) {
      for (const list of ['domain_allowlist', 'domain_denylist']) {
        expect(() => parsePolicyYaml(policy(`${list}: ["${entry}"]`)), `${list} ${entry}`).toThrow(`unsupported endpoint.${list} entry for net`);
      }
    }
  });

  it('stores entries as written (lowercased): digests of scheme-less policies are unchanged, a scheme is part of the digest', () => {
    const plain = parsePolicyYaml(policy('domain_allowlist: ["api.github.com"]'));
    const https = parsePolicyYaml(policy('domain_allowlist: ["HTTPS://api.github.com"]'));
    expect(https.policy.rules[0]!.endpoint.domain_allowlist).toEqual(['https://api.github.com']);
    expect(plain.policy.rules[0]!.endpoint.domain_allowlist).toEqual(['api.github.com']);
    expect(https.digest).toBe(policyDigest(https.policy));
    expect(https.digest).not.toBe(plain.digest);
  });
});
