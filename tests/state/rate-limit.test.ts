import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRFC3339 } from '../../src/canon/gotime.js';
import { consumeRateLimit } from '../../src/state/rate-limit.js';
import { tempDir, wardAsync } from '../cli/run.js';
import { fixture } from '../cli/run.js';

const limit = { requests: 2, window: 'minute' as const, scope: 'tool_identity' as const };
const subject = { toolName: 'tool.write', identity: 'alice' };
const at = parseRFC3339('2026-03-12T12:00:30Z');

describe('rate-limit counters (Ward decision 9)', () => {
  it('creates its directory, counts allowed calls and refuses at the limit without counting', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'ward-rl-')), 'nested', 'state.json');
    expect(consumeRateLimit(path, limit, subject, at)).toMatchObject({ used: 1, remaining: 1, exceeded: false });
    expect(consumeRateLimit(path, limit, subject, at)).toMatchObject({ used: 2, remaining: 0, exceeded: false });
    const third = consumeRateLimit(path, limit, subject, at);
    expect(third).toMatchObject({ used: 2, exceeded: true, key: 'minute|tool_identity|2026-03-12T12:00:00Z|tool.write|alice' });
    const state = JSON.parse(readFileSync(path, 'utf8'));
    expect(state.counters).toEqual([{ key: third.key, count: 2 }]);
  });

  it('starts a new bucket each minute and scopes by identity', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'ward-rl-')), 'state.json');
    consumeRateLimit(path, limit, subject, at);
    consumeRateLimit(path, limit, subject, at);
    expect(consumeRateLimit(path, limit, subject, parseRFC3339('2026-03-12T12:01:00Z')).exceeded).toBe(false);
    expect(consumeRateLimit(path, limit, { ...subject, identity: 'bob' }, at).exceeded).toBe(false);
  });

  it('refuses a corrupt counter file instead of resetting the limit', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'ward-rl-')), 'state.json');
    writeFileSync(path, '{not json');
    expect(() => consumeRateLimit(path, limit, subject, at)).toThrow(/not valid JSON/);
  });

  it('lets exactly `requests` of many concurrent gate eval processes through', async () => {
    const cwd = tempDir('ward-rl-cli-');
    writeFileSync(join(cwd, 'p.yaml'), 'rules: [{ name: limited, effect: allow, rate_limit: { requests: 3, window: hour, scope: tool } }]\n');
    const runs = await Promise.all(
      Array.from({ length: 8 }, () => wardAsync(['gate', 'eval', '--policy', 'p.yaml', '--intent', fixture('intents/v1-approval-valid.json'), '--json'], { cwd })),
    );
    const verdicts = runs.map((r) => JSON.parse(r.stdout).verdict).sort();
    expect(verdicts).toEqual(['allow', 'allow', 'allow', 'block', 'block', 'block', 'block', 'block']);
    const blocked = runs.map((r) => JSON.parse(r.stdout)).find((o) => o.verdict === 'block');
    expect(blocked.reason_codes).toContain('rate_limit_exceeded');
  });
});
