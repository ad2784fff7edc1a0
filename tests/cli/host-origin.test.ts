import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir, ward } from './run.js';

/*
 * Issue 31, item 4 end to end through `ward gate eval` with a policy file: `https://api.github.com`
 * in an allowlist is https on 443, and a denylist entry with a scheme denies the host on every scheme.
 */

let dir: string;
const POLICY = `default_verdict: allow
rules:
  - name: github-only
    effect: allow
    match: { tool_names: [http.get] }
    endpoint:
      domain_allowlist: ["https://api.github.com"]
      domain_denylist: ["https://evil.example"]
`;

function evalUrl(value: string, kind = 'url'): { code: number; verdict: unknown; reasons: unknown } {
  const file = join(dir, `intent-${Math.random().toString(36).slice(2)}.json`);
  const target = { kind, value, operation: 'read' };
  writeFileSync(file, JSON.stringify({ tool_name: 'http.get', args: { url: value }, targets: [target], context: { identity: 'a', workspace: dir, risk_class: 'low' } }));
  const r = ward(['gate', 'eval', '--policy', 'policy.yaml', '--intent', file, '--json'], { cwd: dir });
  const out = JSON.parse(r.stdout) as Record<string, unknown>;
  return { code: r.code, verdict: out['verdict'], reasons: out['reason_codes'] };
}

beforeAll(() => {
  dir = tempDir();
  writeFileSync(join(dir, 'policy.yaml'), POLICY);
});

describe('gate eval: domain entries with a scheme', () => {
  it('allows https on the default port', () => {
    expect(evalUrl('https://api.github.com/repos/x/y')).toMatchObject({ code: 0, verdict: 'allow' });
  });

  it('blocks http, another port and a bare host target against an https entry', () => {
    for (const [value, kind] of [['http://api.github.com/', 'url'], ['https://api.github.com:8443/', 'url'], ['api.github.com', 'host']] as const) {
      const r = evalUrl(value, kind);
      expect([value, r.code, r.verdict]).toEqual([value, 3, 'block']);
      expect(r.reasons).toContain('endpoint_domain_not_allowlisted');
    }
  });

  it('a denylist entry with a scheme denies the host over http too', () => {
    const r = evalUrl('http://evil.example/');
    expect(r.code).toBe(3);
    expect(r.reasons).toContain('endpoint_domain_denied');
  });

  it('policy validate refuses an entry with a path', () => {
    writeFileSync(join(dir, 'bad.yaml'), POLICY.replace('https://api.github.com"', 'https://api.github.com/repos"'));
    const r = ward(['policy', 'validate', 'bad.yaml'], { cwd: dir });
    expect(r.code).not.toBe(0);
    expect(r.stderr + r.stdout).toContain('names a path, query or fragment');
  });
});
