import { describe, expect, it } from 'vitest';
import {
  canonicalHostTarget,
  canonicalHostname,
  canonicalPath,
  canonicalTargetNotes,
  canonicalUrl,
  toolNameProblem,
} from '../../src/intent/canonical.js';
import { normalizeIntent } from '../../src/intent/normalize.js';
import type { NormalizedIntent } from '../../src/intent/types.js';

const WS = '/srv/app';

function pathOf(value: string, workspace = WS): string {
  const r = canonicalPath(value, workspace);
  if (!r.ok) throw new Error(`expected ${value} to canonicalize: ${r.problem}`);
  return r.value;
}

function problemOf(value: string, workspace = WS): string {
  const r = canonicalPath(value, workspace);
  if (r.ok) throw new Error(`expected ${value} to be refused, got ${r.value}`);
  return r.problem;
}

describe('canonicalPath', () => {
  it.each([
    ['/etc/shadow', '/etc/shadow'],
    ['../../../etc/shadow', '/etc/shadow'],
    ['../../../../../../etc/shadow', '/etc/shadow'],
    ['etc/shadow', '/srv/app/etc/shadow'],
    ['./src/../src/main.ts', '/srv/app/src/main.ts'],
    ['/etc//./shadow/', '/etc/shadow'],
    ['\\etc\\shadow', '/etc/shadow'],
    ['/proc/self/root/etc/shadow', '/etc/shadow'],
    ['/proc/1/root/proc/self/root/etc/shadow', '/etc/shadow'],
    ['/proc/thread-self/root/etc/shadow', '/etc/shadow'],
    ['/proc/42/task/43/root/etc/shadow', '/etc/shadow'],
    ['/proc/self/root', '/'],
    ['/proc/self/status', '/proc/self/status'],
    // `..` at a process's root stays at that root, as the kernel walks it (issue 26).
    ['/proc/self/root/../etc/shadow', '/etc/shadow'],
    ['/proc/self/root/../../../etc/shadow', '/etc/shadow'],
    ['\\proc\\self\\root\\..\\etc\\shadow', '/etc/shadow'],
    ['/proc/thread-self/root/../etc/shadow', '/etc/shadow'],
    ['/proc/self/task/7/root/../etc/shadow', '/etc/shadow'],
    ['/proc/1/root/proc/self/root/../etc/shadow', '/etc/shadow'],
    ['file:///etc/shadow', '/etc/shadow'],
    ['FILE:///etc/%73hadow', '/etc/shadow'],
    ['file://localhost/etc/shadow', '/etc/shadow'],
    ['file:///C:/Windows/win.ini', 'C:/Windows/win.ini'],
    ['c:/repo/../x', 'C:/x'],
  ])('%s is %s', (value, expected) => {
    expect(pathOf(value)).toBe(expected);
  });

  it('joins relative paths to a Windows workspace', () => {
    expect(pathOf('src\\a.ts', 'C:/repo/work')).toBe('C:/repo/work/src/a.ts');
  });

  it.each([
    ['/etc/shadow\0.txt', /NUL/],
    ['~/.ssh/id_rsa', /~/],
    ['~root/.ssh/id_rsa', /~/],
    ['/proc/self/cwd/etc/shadow', /cwd/],
    ['/proc/1/fd/3', /fd/],
    ['/dev/fd/3', /fd/],
    ['/dev/stdin', /stdin/],
    // `..` that steps back out of a /proc process directory: the kernel takes it from the link's target.
    ['/proc/self/cwd/../../etc/shadow', /cwd|\.\./],
    ['/proc/self/../1/root/etc/shadow', /after \/proc\/self /],
    ['/proc/net/../root/../etc/shadow', /after \/proc\/net /],
    ['/proc/self/fdinfo/../exe', /after \/proc/],
    ['/proc/thread-self/../../etc/shadow', /after \/proc/],
    ['/dev/fd/../root/../etc/shadow', /fd/],
    ['file:///proc/self/cwd/../../etc/shadow', /cwd|\.\./],
    ['file:///proc/self/root/../etc/shadow', /as written but \/proc\/self\/etc\/shadow once parsed/],
    ['file:///proc/net/%2e%2e/root/%2e%2e/etc/shadow', /after \/proc/],
    ['file:///proc/net/..%2Froot/../etc/shadow', /after \/proc/],
    ['file://evil.example/etc/shadow', /remote host/],
    ['file:///etc/%00shadow', /NUL/],
  ])('refuses %j', (value, why) => {
    expect(problemOf(value)).toMatch(why);
  });

  it('refuses a relative path when the workspace is not absolute', () => {
    expect(problemOf('etc/shadow', 'repo')).toMatch(/workspace is not absolute/);
    expect(pathOf('/etc/shadow', 'repo')).toBe('/etc/shadow');
  });
});

describe('canonical hosts', () => {
  it.each([
    'http://169.254.169.254/',
    'http://2852039166/',
    'http://0xa9fea9fe/',
    'http://0251.0376.0251.0376/',
    'http://169.254.43518/',
    'http://169.254.169.254./',
    'http:/169.254.169.254/',
    'http:169.254.169.254/',
    'http://169.254.169.254\\@example.com/',
    'http://\uff11\uff16\uff19.\uff12\uff15\uff14.\uff11\uff16\uff19.\uff12\uff15\uff14/',
    'http://169.254.\t169.254/',
    'http://%31%36%39.254.169.254/',
    'http://user:pw@169.254.169.254:80/latest',
    'http://[::ffff:169.254.169.254]/',
    'http://[::ffff:a9fe:a9fe]/',
    'HTTP://169.254.169.254/',
  ])('%j reaches 169.254.169.254', (url) => {
    const r = canonicalUrl(url);
    expect(r.ok && r.value.host).toBe('169.254.169.254');
  });

  it('reads the host the way the WHATWG parser (and so Node and curl-like tools) does', () => {
    const r = canonicalUrl('https://evil.com\\@api.example.com/');
    expect(r.ok && r.value.host).toBe('evil.com');
    const s = canonicalUrl('https:/evil.com/v1');
    expect(s.ok && s.value.host).toBe('evil.com');
  });

  it('applies IDNA, lowercases and drops trailing dots', () => {
    const r = canonicalUrl('https://M\u00dcNCHEN.de./x');
    expect(r.ok && r.value).toEqual({ host: 'xn--mnchen-3ya.de', href: 'https://xn--mnchen-3ya.de/x' });
    expect(canonicalHostname('Example.COM.')).toEqual({ ok: true, value: 'example.com' });
    expect(canonicalHostname('api.example.com')).toEqual({ ok: true, value: 'api.example.com' });
    expect(canonicalHostname('0x7f.1')).toEqual({ ok: true, value: '127.0.0.1' });
    expect(canonicalHostname('10.0.0.0x1')).toEqual({ ok: true, value: '10.0.0.1' });
    expect(canonicalHostname('2852039166.')).toEqual({ ok: true, value: '169.254.169.254' });
    expect(canonicalHostname('[::1]')).toEqual({ ok: true, value: '::1' });
    expect(canonicalHostname('0:0:0:0:0:0:0:1')).toEqual({ ok: true, value: '::1' });
  });

  it('canonicalizes the host of non-special schemes too', () => {
    const r = canonicalUrl('ssh://Evil.COM./repo');
    expect(r.ok && r.value.host).toBe('evil.com');
  });

  it('refuses what has no host to reach', () => {
    expect(canonicalUrl('evil.com/v1').ok).toBe(false);
    expect(canonicalUrl('mailto:a@example.com').ok).toBe(false);
    expect(canonicalUrl('http://exa mple.com/').ok).toBe(false);
    expect(canonicalHostname('bad host').ok).toBe(false);
    expect(canonicalHostname('[zz::1]').ok).toBe(false);
  });

  it('reads host targets as a host, host:port or an http(s) URL', () => {
    expect(canonicalHostTarget('Example.ORG:80/path')).toEqual({ ok: true, value: 'example.org' });
    expect(canonicalHostTarget('https://API.example.com:8443/v1')).toEqual({ ok: true, value: 'api.example.com' });
    expect(canonicalHostTarget('2852039166')).toEqual({ ok: true, value: '169.254.169.254' });
    expect(canonicalHostTarget('[::ffff:a9fe:a9fe]:80')).toEqual({ ok: true, value: '169.254.169.254' });
  });
});

describe('tool names', () => {
  it('full-width and compatibility forms are not canonical', () => {
    expect(toolNameProblem('\uff46\uff53.\uff57\uff52\uff49\uff54\uff45')).toMatch(/not in canonical form .*"fs\.write"/);
    expect(toolNameProblem('\ufb01le.read')).toMatch(/"file\.read"/);
  });
  it('invisible and control characters are refused', () => {
    expect(toolNameProblem('fs.wr\u200bite')).toMatch(/invisible/);
    expect(toolNameProblem('fs.write\u202e')).toMatch(/invisible/);
    expect(toolNameProblem('fs.write\u0000')).toMatch(/control/);
  });
  it('plain and non-Latin canonical names pass', () => {
    expect(toolNameProblem('fs.write')).toBeUndefined();
    expect(toolNameProblem('outil.cr\u00e9er')).toBeUndefined();
    expect(toolNameProblem('mcp__github__create_issue')).toBeUndefined();
  });
});

describe('normalization refuses ambiguous targets and claims', () => {
  const base = (over: Record<string, unknown>) => ({
    tool_name: 'http.get',
    args: {},
    targets: [],
    ...over,
    context: { identity: 'alice', workspace: '/repo', risk_class: 'medium' },
  });
  const refusal = (raw: unknown) => {
    try {
      normalizeIntent(raw);
    } catch (err) {
      return err as Error & { code: string };
    }
    throw new Error('expected the intent to be refused');
  };

  it('an endpoint_domain claim that contradicts the URL', () => {
    const err = refusal(base({ targets: [{ kind: 'url', value: 'http://169.254.169.254/', endpoint_domain: 'api.example.com' }] }));
    expect(err.code).toBe('ERR_INTENT_INVALID');
    expect(err.message).toMatch(/endpoint_domain api\.example\.com contradicts the target, which reaches 169\.254\.169\.254/);
  });

  it('accepts a claim that names the same host in another spelling', () => {
    const n = normalizeIntent(base({ targets: [{ kind: 'url', value: 'https://API.example.com/v1', endpoint_domain: 'api.example.com.' }] }));
    expect(n.targets[0]!.endpoint_domain).toBe('api.example.com.');
  });

  it('an endpoint_class claim that contradicts the operation or kind', () => {
    expect(refusal(base({ targets: [{ kind: 'path', value: '/x', operation: 'delete', endpoint_class: 'fs.read' }] })).message).toMatch(
      /endpoint_class fs\.read contradicts the target \(kind path, operation delete means fs\.delete\)/,
    );
    expect(refusal(base({ targets: [{ kind: 'url', value: 'https://x.example/', endpoint_class: 'fs.read' }] })).message).toMatch(
      /contradicts/,
    );
    expect(normalizeIntent(base({ targets: [{ kind: 'path', value: '/x', operation: 'delete', endpoint_class: 'fs.delete' }] })).targets).toHaveLength(1);
  });

  it('a NUL byte in a target value', () => {
    expect(refusal(base({ targets: [{ kind: 'path', value: '/etc/shadow\u0000.txt' }] })).message).toMatch(/NUL/);
  });

  it('invisible characters or compatibility forms in a tool name', () => {
    expect(refusal(base({ tool_name: 'fs.del\u200bete' })).message).toMatch(/tool_name contains control or invisible characters/);
    expect(refusal(base({ tool_name: '\uff46\uff53.\uff44\uff45\uff4c\uff45\uff54\uff45' })).message).toMatch(/tool_name is not in canonical form/);
  });

  it('numbers outside float64 and args nested past the limit', () => {
    expect(refusal(base({ args: { n: Infinity } })).message).toMatch(/outside the range/);
    let deep: unknown = {};
    for (let i = 0; i < 128; i++) deep = { a: deep };
    expect(refusal(base({ args: deep })).message).toMatch(/nests deeper than 100/);
    let arrays: unknown = 1;
    for (let i = 0; i < 10_000; i++) arrays = [arrays];
    expect(refusal(base({ args: { a: arrays } })).code).toBe('ERR_INTENT_INVALID');
  });

  it('a script with top-level targets, provenance or tool_name its steps do not carry', () => {
    const step = { tool_name: 'fs.read', targets: [{ kind: 'path', value: '/tmp/in' }], arg_provenance: [{ arg_path: '$.p', source: 'user' }] };
    const script = { steps: [step] };
    expect(refusal(base({ tool_name: '', script, targets: [{ kind: 'path', value: '/etc/shadow' }] })).message).toMatch(
      /targets\[0\] is not listed in any script step/,
    );
    expect(refusal(base({ tool_name: '', script, arg_provenance: [{ arg_path: '$.p', source: 'external' }] })).message).toMatch(
      /arg_provenance\[0\] is not listed/,
    );
    expect(refusal(base({ tool_name: 'fs.delete', script })).message).toMatch(/conflicts with script/);
    const summary = normalizeIntent(base({ tool_name: 'script', script, targets: [{ kind: 'path', value: '/tmp/in' }] }));
    expect(summary.targets.map((t) => t.value)).toEqual(['/tmp/in']);
  });
});

describe('canonicalTargetNotes (what the trace records)', () => {
  const n = (targets: unknown[]) =>
    normalizeIntent({ tool_name: 'fs.read', args: {}, targets, context: { identity: 'a', workspace: '/srv/app', risk_class: 'low' } });

  const resolvedAsWritten = (intent: NormalizedIntent): NormalizedIntent => ({
    ...intent,
    path_view: { paths: new Map([['/etc/hosts', { names: ['/etc/hosts'] }]]), deniedPatterns: new Map() },
  });

  it('is empty when every target is already canonical and resolved on the file system', () => {
    const intent = n([{ kind: 'path', value: '/etc/hosts' }, { kind: 'url', value: 'https://api.example.com/v1' }]);
    expect(canonicalTargetNotes(resolvedAsWritten(intent))).toEqual([]);
  });

  it('marks paths read without a file system (a daemon deciding for another machine) as lexical', () => {
    const intent = n([{ kind: 'path', value: '/etc/hosts' }, { kind: 'url', value: 'https://api.example.com/v1' }]);
    expect(canonicalTargetNotes(intent)).toEqual([{ kind: 'path', value: '/etc/hosts', resolution: 'lexical' }]);
  });

  it('records the other names the file system gives a file, and paths it did not resolve', () => {
    const intent = n([
      { kind: 'path', value: '/srv/app/pub/key.pem' },
      { kind: 'path', value: '/srv/app/other' },
    ]);
    const view = { paths: new Map([['/srv/app/pub/key.pem', { names: ['/srv/app/secrets/key.pem', '/srv/keys/key.pem'] }]]), deniedPatterns: new Map() };
    expect(canonicalTargetNotes({ ...intent, path_view: view })).toEqual([
      { kind: 'path', value: '/srv/app/other', problem: 'path was not resolved on the file system' },
      { kind: 'path', value: '/srv/app/pub/key.pem', aliases: ['/srv/app/secrets/key.pem', '/srv/keys/key.pem'] },
    ]);
  });

  it('records rewritten values, hosts the reference would not see, and refusals', () => {
    expect(
      canonicalTargetNotes(
        n([
          { kind: 'path', value: '../../etc/shadow' },
          { kind: 'url', value: 'https://evil.com\\@api.example.com/' },
          { kind: 'path', value: '~/.ssh/id_rsa' },
        ]),
      ),
    ).toEqual([
      { kind: 'path', value: '../../etc/shadow', canonical_value: '/etc/shadow', resolution: 'lexical' },
      { kind: 'path', value: '~/.ssh/id_rsa', problem: 'path starts with ~ (home directory of an unknown user)' },
      { kind: 'url', value: 'https://evil.com\\@api.example.com/', canonical_value: 'https://evil.com/@api.example.com/', canonical_host: 'evil.com' },
    ]);
  });
});
