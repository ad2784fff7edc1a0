import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir, ward } from './run.js';

/*
 * Issue 13 end to end through `ward gate eval`: a traversal is decided on the file it reaches and
 * the trace says so, and input Ward cannot evaluate follows one rule whatever makes it so: a traced
 * block under a fail-closed risk class, exit 6 otherwise.
 */

let dir: string;
const POLICY = `default_verdict: allow
fail_closed: { enabled: true }
rules:
  - name: fs
    effect: allow
    match: { tool_names: [fs.read] }
    endpoint: { path_denylist: ["/etc/**"] }
`;

function intentText(args: string, risk: string, target = '{"kind":"path","value":"notes.txt","operation":"read"}'): string {
  return `{"tool_name":"fs.read","args":${args},"targets":[${target}],"context":{"identity":"a","workspace":"/srv/app/current","risk_class":"${risk}"}}`;
}

function evalText(text: string): { code: number; out: Record<string, unknown> } {
  const file = join(dir, `intent-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, text);
  const r = ward(['gate', 'eval', '--policy', 'policy.yaml', '--intent', file, '--json'], { cwd: dir });
  return { code: r.code, out: JSON.parse(r.stdout) as Record<string, unknown> };
}

beforeAll(() => {
  dir = tempDir();
  writeFileSync(join(dir, 'policy.yaml'), POLICY);
});

describe('gate eval on canonical targets', () => {
  it('blocks a relative traversal out of the workspace and records the canonical path in the signed trace', () => {
    const r = evalText(intentText('{}', 'low', '{"kind":"path","value":"../../../etc/shadow","operation":"read"}'));
    expect(r.code).toBe(3);
    expect(r.out['reason_codes']).toContain('endpoint_path_denied');
    const trace = JSON.parse(readFileSync(r.out['trace_path'] as string, 'utf8')) as Record<string, unknown>;
    expect(trace['canonical_targets']).toEqual([{ kind: 'path', value: '../../../etc/shadow', canonical_value: '/etc/shadow' }]);
    expect(ward(['trace', 'verify', r.out['trace_path'] as string], { cwd: dir }).code).toBe(0);
  });

  it('allows a relative path that stays inside the workspace', () => {
    expect(evalText(intentText('{}', 'low')).out['verdict']).toBe('allow');
  });
});

describe('one rule for input Ward cannot evaluate', () => {
  const deep = (n: number) => '['.repeat(n) + '1' + ']'.repeat(n);
  const cases: [string, string][] = [
    ['1e400', '{"n":1e400}'],
    ['128-deep args', `{"d":${deep(128)}}`],
    ['10,000-deep args', `{"d":${deep(10_000)}}`],
    ['200,000-deep args', `{"d":${deep(200_000)}}`],
  ];

  it.each(cases)('%s: a traced block under high risk', (_, args) => {
    const r = evalText(intentText(args, 'high'));
    expect(r.code).toBe(3);
    expect(r.out['verdict']).toBe('block');
    expect(r.out['reason_codes']).toEqual(['fail_closed_intent_invalid']);
    expect(ward(['trace', 'verify', r.out['trace_path'] as string], { cwd: dir }).code).toBe(0);
  });

  it.each(cases)('%s: exit 6 with a clear error under low risk', (_, args) => {
    const r = evalText(intentText(args, 'low'));
    expect(r.code).toBe(6);
    expect(r.out['error']).toMatch(/outside the range of a 64-bit float|nests deeper than 100 levels/);
  });
});
