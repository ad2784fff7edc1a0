import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decide, intent } from './helpers.js';

/*
 * Two spellings of the same target get the same verdict (issue 13): generated equivalent
 * spellings of a denied path or host are decided exactly as the plain spelling is, under allow-,
 * deny- and rule-based policies.
 */

const WORKSPACE = '/srv/app/current';

const PATH_POLICIES = {
  denylist: 'default_verdict: allow\nrules: [{ name: fs, effect: allow, match: { tool_names: [fs.read] }, endpoint: { path_denylist: ["/etc/shadow"] } }]',
  'denylist glob': 'default_verdict: allow\nrules: [{ name: fs, effect: allow, match: { tool_names: [fs.read] }, endpoint: { path_denylist: ["/etc/*"] } }]',
  allowlist: 'default_verdict: allow\nrules: [{ name: fs, effect: allow, match: { tool_names: [fs.read] }, endpoint: { path_allowlist: ["/srv/app/**"] } }]',
  'target_values rule': 'default_verdict: allow\nrules: [{ name: shadow, priority: 1, effect: block, match: { target_values: ["/etc/shadow"] } }]',
};

const HOST_POLICIES = {
  denylist: 'default_verdict: allow\nrules: [{ name: net, effect: allow, match: { tool_names: [http.get] }, endpoint: { domain_denylist: ["169.254.169.254"] } }]',
  allowlist: 'default_verdict: allow\nrules: [{ name: net, effect: allow, match: { tool_names: [http.get] }, endpoint: { domain_allowlist: [api.example.com] } }]',
  'approval baseline':
    'default_verdict: require_approval\nrules: [{ name: net, effect: allow, match: { tool_names: [http.get] }, endpoint: { domain_denylist: ["169.254.169.254"], action: block } }]',
  'target_values rule': 'default_verdict: allow\nrules: [{ name: imds, priority: 1, effect: block, match: { target_kinds: [url], target_values: ["http://169.254.169.254/latest"] } }]',
};

function verdictOf(policy: string, tool: string, target: Record<string, unknown>): string {
  const o = decide(policy, intent({ tool_name: tool, args: {}, targets: [target], arg_provenance: [] }, { workspace: WORKSPACE }));
  return `${o.verdict} ${[...o.reasonCodes].sort().join(',')}`;
}

/** Equivalent spellings of `/etc/shadow` as seen from WORKSPACE. */
const shadowSpelling = fc
  .record({
    form: fc.constantFrom('absolute', 'relative', 'proc-root', 'proc-root-up', 'file-url', 'nested-proc'),
    ups: fc.integer({ min: 3, max: 8 }),
    dots: fc.array(fc.constantFrom('./', './/', 'x/../', 'etc/../'), { maxLength: 3 }),
    backslashes: fc.boolean(),
    trailing: fc.constantFrom('', '/', '/.'),
    encode: fc.boolean(),
  })
  .map(({ form, ups, dots, backslashes, trailing, encode }) => {
    const inner = `${dots.join('')}etc/${dots.length ? './' : ''}shadow${trailing}`;
    let value: string;
    switch (form) {
      case 'absolute':
        value = `/${inner}`;
        break;
      case 'relative':
        value = `${'../'.repeat(ups)}${inner}`;
        break;
      case 'proc-root':
        value = `/proc/self/root/${inner}`;
        break;
      case 'proc-root-up': // `..` at a process's root stays there (issue 26)
        value = `/proc/self/root/${'../'.repeat(ups)}${inner}`;
        break;
      case 'nested-proc':
        value = `/proc/1/root/proc/thread-self/root/${inner}`;
        break;
      default:
        value = `file:///${encode ? inner.replace('shadow', '%73had%6Fw') : inner}`;
    }
    return backslashes && form !== 'file-url' ? value.replaceAll('/', '\\') : value;
  });

/** Equivalent spellings of a URL on the host 169.254.169.254, path /latest. */
const metadataSpelling = fc
  .record({
    host: fc.constantFrom(
      '169.254.169.254',
      '2852039166',
      '0xa9fea9fe',
      '0XA9.0xFE.0xa9.0xfe',
      '0251.0376.0251.0376',
      '169.254.43518',
      '169.254.169.254.',
      '\uff11\uff16\uff19.\uff12\uff15\uff14.\uff11\uff16\uff19.\uff12\uff15\uff14',
      '169.254.\t169.254',
      '%31%36%39.254.169.254',
      '[::ffff:169.254.169.254]',
      '[::ffff:a9fe:a9fe]',
    ),
    scheme: fc.constantFrom('http://', 'HTTP://', 'http:/', 'http:', 'http:\\\\'),
    userinfo: fc.constantFrom('', 'user@', 'user:pw@'),
    port: fc.constantFrom('', ':80'),
  })
  .map(({ host, scheme, userinfo, port }) => `${scheme}${userinfo}${host}${port}/latest`);

describe('equivalent spellings of a denied path get the plain spelling’s verdict', () => {
  for (const [name, policy] of Object.entries(PATH_POLICIES)) {
    it(name, () => {
      const plain = verdictOf(policy, 'fs.read', { kind: 'path', value: '/etc/shadow', operation: 'read' });
      expect(plain).toMatch(/^block /);
      fc.assert(
        fc.property(shadowSpelling, (value) => {
          expect(verdictOf(policy, 'fs.read', { kind: 'path', value, operation: 'read' })).toBe(plain);
        }),
        { numRuns: 300 },
      );
    });
  }
});

describe('equivalent spellings of the metadata address get the plain spelling’s verdict', () => {
  for (const [name, policy] of Object.entries(HOST_POLICIES)) {
    it(name, () => {
      const plain = verdictOf(policy, 'http.get', { kind: 'url', value: 'http://169.254.169.254/latest' });
      expect(plain).toMatch(/^block /);
      fc.assert(
        fc.property(metadataSpelling, (value) => {
          expect(verdictOf(policy, 'http.get', { kind: 'url', value })).toBe(plain);
        }),
        { numRuns: 300 },
      );
    });
  }
});

describe('lists fail closed on targets they cannot reduce', () => {
  const allow = HOST_POLICIES.allowlist;
  it.each(['https:/evil.com/v1', 'https://evil.com\\@api.example.com/', 'http://evil.com\t/'])('%j is outside the allowlist', (value) => {
    const o = decide(allow, intent({ tool_name: 'http.get', targets: [{ kind: 'url', value }] }));
    expect(o.verdict).toBe('block');
    expect(o.reasonCodes).toContain('endpoint_domain_not_allowlisted');
  });

  it('a URL without a host fails an allowlist and a denylist closed', () => {
    for (const policy of [allow, HOST_POLICIES.denylist]) {
      const o = decide(policy, intent({ tool_name: 'http.get', targets: [{ kind: 'url', value: 'evil.com/v1' }] }));
      expect(o.verdict).toBe('block');
      expect(o.reasonCodes).toContain('endpoint_target_not_canonical');
    }
  });

  it('a home-relative path fails a path list closed', () => {
    const o = decide(PATH_POLICIES.denylist, intent({ tool_name: 'fs.read', targets: [{ kind: 'path', value: '~/.ssh/id_rsa', operation: 'read' }] }));
    expect(o.verdict).toBe('block');
    expect(o.reasonCodes).toContain('endpoint_target_not_canonical');
  });

  it('an allowed relative path inside the workspace is allowed', () => {
    const o = decide(
      PATH_POLICIES.allowlist,
      intent({ tool_name: 'fs.read', args: { path: 'src/../README.md' }, targets: [{ kind: 'path', value: 'src/../README.md', operation: 'read' }] }, { workspace: WORKSPACE }),
    );
    expect(o.verdict).toBe('allow');
  });

  it('a file: URL target is held to the path lists', () => {
    const o = decide(PATH_POLICIES.denylist, intent({ tool_name: 'fs.read', targets: [{ kind: 'url', value: 'file:///etc/shadow' }] }));
    expect(o.verdict).toBe('block');
    expect(o.reasonCodes).toContain('endpoint_path_denied');
  });

  it('relative path patterns name paths in the workspace, as relative targets do', () => {
    const deny = 'rules: [{ name: fs, effect: allow, endpoint: { path_denylist: ["secrets/**"] } }]';
    const allow = 'rules: [{ name: fs, effect: allow, endpoint: { path_allowlist: ["./src/**"] } }]';
    const read = (value: string, policy: string) =>
      decide(policy, intent({ tool_name: 'fs.read', args: { path: value }, targets: [{ kind: 'path', value, operation: 'read' }] }, { workspace: WORKSPACE })).verdict;
    expect(read('secrets/key.pem', deny)).toBe('block');
    expect(read(`${WORKSPACE}/secrets/key.pem`, deny)).toBe('block');
    expect(read('src/../secrets/key.pem', deny)).toBe('block');
    expect(read('docs/readme.md', deny)).toBe('allow');
    expect(read('src/a.ts', allow)).toBe('allow');
    expect(read(`${WORKSPACE}/src/a.ts`, allow)).toBe('allow');
    expect(read('src/../../etc/passwd', allow)).toBe('block');
  });

  it('a denied directory denies what is under it, at any depth', () => {
    const o = decide(
      'rules: [{ name: fs, effect: allow, endpoint: { path_denylist: ["/srv/secrets/*"] } }]',
      intent({ tool_name: 'fs.read', targets: [{ kind: 'path', value: '/srv/secrets/team/a/key.pem', operation: 'read' }] }),
    );
    expect(o.reasonCodes).toContain('endpoint_path_denied');
  });
});

describe('rules compare canonical forms', () => {
  it('a tool name in full-width letters is refused, never decided as another tool', () => {
    const policy = 'default_verdict: allow\nfail_closed: { enabled: true }\nrules: [{ name: no-delete, effect: block, match: { tool_names: [fs.delete] } }]';
    const fullWidth = '\uff46\uff53.\uff44\uff45\uff4c\uff45\uff54\uff45';
    expect(decide(policy, intent({ tool_name: fullWidth }, { risk_class: 'high' })).reasonCodes).toEqual(['fail_closed_intent_invalid']);
    expect(() => decide(policy, intent({ tool_name: fullWidth }))).toThrow(/not in canonical form/);
  });

  it('an argument listed with two sources counts as the less trusted one', () => {
    const policy = `
default_verdict: block
rules:
  - { name: user-only, effect: allow, match: { provenance_sources: [user] } }
`;
    const both = decide(policy, intent({ arg_provenance: [{ arg_path: '$.path', source: 'user' }, { arg_path: '$.path', source: 'external' }] }));
    expect(both.verdict).toBe('block');
    const userOnly = decide(policy, intent());
    expect(userOnly.verdict).toBe('allow');
  });

  it('a delegation chain must start at an allowed delegator', () => {
    const policy = `
default_verdict: block
rules:
  - { name: delegated, effect: allow, match: { allowed_delegator_identities: [alice] } }
`;
    const link = (from: string, to: string) => ({ delegator_identity: from, delegate_identity: to });
    const rooted = decide(policy, intent({ delegation: { requester_identity: 'bot2', chain: [link('alice', 'bot1'), link('bot1', 'bot2')] } }));
    expect(rooted.verdict).toBe('allow');
    const hopped = decide(policy, intent({ delegation: { requester_identity: 'bot2', chain: [link('mallory', 'alice'), link('alice', 'bot2')] } }));
    expect(hopped.verdict).toBe('block');
  });
});

describe('one rule for unevaluable input', () => {
  it('1e400 and over-deep args are a traced block under fail-closed risk, an error otherwise', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200; i++) deep = { a: deep };
    for (const args of [{ n: Number.POSITIVE_INFINITY }, { a: deep }]) {
      const o = decide('fail_closed: { enabled: true }\ndefault_verdict: allow', intent({ args }, { risk_class: 'high' }));
      expect(o.verdict).toBe('block');
      expect(o.reasonCodes).toEqual(['fail_closed_intent_invalid']);
      expect(() => decide('default_verdict: allow', intent({ args }))).toThrow(expect.objectContaining({ code: 'ERR_INTENT_INVALID' }));
    }
  });

  it('10,000-deep nesting is a WardError, not a RangeError', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(() => decide('default_verdict: allow', intent({ args: { a: deep } }))).toThrow(expect.objectContaining({ code: 'ERR_INTENT_INVALID' }));
  });
});
