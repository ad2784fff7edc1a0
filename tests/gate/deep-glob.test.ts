import { describe, expect, it } from 'vitest';
import { evaluate, nowUTC, parsePolicyYaml } from '../../src/index.js';
import { deepPathMatch } from '../../src/gate/glob.js';

describe('deepPathMatch: a denylist reads a ** segment as any number of segments', () => {
  it.each([
    ['/home/**/secrets', '/home/secrets', true],
    ['/home/**/secrets', '/home/a/secrets', true],
    ['/home/**/secrets', '/home/a/b/c/secrets', true],
    ['/home/**/secrets', '/home/a/b/secretsx', false],
    ['/home/**/secrets', '/homex/a/secrets', false],
    ['/home/*/.ssh/**', '/home/al/.ssh/id_rsa', true],
    ['/home/*/.ssh/**', '/home/al/.ssh', true],
    ['/home/*/.ssh/**', '/home/al/b/.ssh/x', false],
    ['/a/**/b/**', '/a/x/y/b/c/d', true],
    ['/srv/**/*.pem', '/srv/a/b/key.pem', true],
    ['/srv/**/*.pem', '/srv/a/b/key.pem.txt', false],
  ])('%s ~ %s: %s', (pattern, path, expected) => {
    expect(deepPathMatch(pattern, path)).toBe(expected);
  });
});

const policy = (list: 'path_denylist' | 'path_allowlist', pattern: string) =>
  parsePolicyYaml(`default_verdict: allow
rules:
  - name: files
    priority: 10
    effect: allow
    match:
      tool_names: [fs.read_file]
    endpoint:
      ${list}: ["${pattern}"]
      action: block
`);

const read = (path: string) => ({
  schema_id: 'gait.gate.intent_request',
  schema_version: '1.0.0',
  created_at: '2026-11-28T00:00:00Z',
  producer_version: 'test',
  tool_name: 'fs.read_file',
  args: { path },
  targets: [{ kind: 'path', value: path, operation: 'read' }],
  arg_provenance: [{ arg_path: '$.path', source: 'user' }],
  context: { identity: 'agent', workspace: '/', risk_class: 'low' },
});

describe('path lists in a policy', () => {
  it('a denylist entry with a mid-path ** blocks the file at any depth', () => {
    const deny = policy('path_denylist', '/home/**/secrets');
    expect(evaluate(deny, read('/home/a/b/secrets/key.pem'), { now: nowUTC() }).verdict).toBe('block');
    expect(evaluate(deny, read('/home/secrets'), { now: nowUTC() }).verdict).toBe('block');
    expect(evaluate(deny, read('/home/a/b/notes.txt'), { now: nowUTC() }).verdict).toBe('allow');
  });

  it('an allowlist keeps Go\'s reading (one segment): it never allows more than the reference', () => {
    const allow = policy('path_allowlist', '/repo/**/README.md');
    expect(evaluate(allow, read('/repo/a/README.md'), { now: nowUTC() }).verdict).toBe('allow');
    expect(evaluate(allow, read('/repo/a/b/README.md'), { now: nowUTC() }).verdict).toBe('block');
  });
});
