import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixture, tempDir, ward } from '../cli/run.js';

describe('ward regress replay with nothing to replay', () => {
  it('fails with exit 6 on an empty directory instead of passing', () => {
    const cwd = tempDir();
    mkdirSync(join(cwd, 'empty'));
    const r = ward(['regress', 'replay', '--policy', fixture('policies/default-allow.yaml'), '--from', 'empty'], { cwd });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('no replayable decisions in empty');
    expect(r.stderr).toContain('--capture-intents');
  });

  it('fails when no trace has a capture, saying why, and lists skipped records next to replayed ones', () => {
    const cwd = tempDir();
    const evalArgs = (extra: string[]) => ['gate', 'eval', '--policy', fixture('policies/default-require-approval.yaml'), '--intent', fixture('intents/v1-approval-valid.json'), ...extra];
    expect(ward(evalArgs([]), { cwd }).code).toBe(4);
    const none = ward(['regress', 'replay', '--policy', fixture('policies/default-allow.yaml'), '--from', '.ward/traces'], { cwd });
    expect(none.code).toBe(6);
    expect(none.stderr).toContain('1 not replayable: no captured intent');

    expect(ward(evalArgs(['--capture-intents', '--trace-out', '.ward/traces/second.json']), { cwd }).code).toBe(4);
    const some = ward(['regress', 'replay', '--policy', fixture('policies/default-allow.yaml'), '--from', '.ward/traces'], { cwd });
    expect(some.code).toBe(5);
    expect(some.stdout).toMatch(/LOOSER \S+ require_approval -> allow .*capture_[0-9a-f]{24}\.json/);
    expect(some.stdout).toMatch(/SKIPPED \S+ .*trace_[0-9a-f]{24}\.json: no captured intent/);
  });
});
