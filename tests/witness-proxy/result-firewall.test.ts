// The result firewall through the real proxy (issue 19, part 3): server-everything's get-env returns
// the server's environment, which holds an AWS access key; the policy's `results` section redacts or
// blocks it before a real SDK 1.x client sees it. Every result decision is a signed trace linked to
// its call's trace, and neither traces, journal, run capture nor logs hold the key.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir, ward as runWard } from '../cli/run.js';
import { EVERYTHING, everyFileText, textOf, throughWard, traces, wardOf } from './helpers.js';

const KEY = 'AKIA' + 'Q3WITNESS7TEST42'; // the AWS access key id shape; split so no scanner flags this file
const policy = (action: string) => `default_verdict: allow
rules: []
results:
  credentials:
    action: ${action}
`;

function setup(action: string) {
  const cwd = tempDir('ward-results-');
  writeFileSync(join(cwd, 'policy.yaml'), policy(action));
  const state = join(cwd, '.ward');
  const log = join(cwd, 'proxy.log');
  return { cwd, state, log, ward: ['--policy', 'policy.yaml', '--state-dir', state, '--log-file', log, '--verbose'] };
}

describe('result firewall', () => {
  it('redact: the key is replaced before the client sees it; the rest of the result is intact; traces link and verify', async () => {
    const { cwd, state, log, ward } = setup('redact');
    const p = await throughWard(ward, [EVERYTHING, 'stdio'], { cwd, env: { AWS_ACCESS_KEY_ID: KEY, WARD_RESULTS_TEST: 'visible-value' } });
    let stderr = '';
    try {
      const r = await p.client.callTool({ name: 'get-env', arguments: {} });
      const text = textOf(r);
      expect(text).not.toContain(KEY);
      expect(text).toContain('[REDACTED:credentials:aws_access_key_id]');
      expect(text).toContain('visible-value');
      expect(r.isError ?? false).toBe(false);
      expect(wardOf(r)).toMatchObject({ result_action: 'redact', detectors: ['credentials:aws_access_key_id'] });
      const echo = await p.client.callTool({ name: 'echo', arguments: { message: 'plain text' } });
      expect(textOf(echo)).toContain('plain text');
      expect(wardOf(echo)['result_action']).toBeUndefined();
    } finally {
      await p.close();
      stderr = p.stderr();
    }
    const all = traces(state);
    const call = all.find((t) => t['tool_name'] === 'get-env' && !String(t['correlation_id']).endsWith('/result'))!;
    const result = all.find((t) => t['tool_name'] === 'get-env' && String(t['correlation_id']).endsWith('/result'))!;
    expect(result['verdict']).toBe('allow');
    expect(result['reason_codes']).toEqual(['mcp_result_credentials_detected']);
    expect(result['violations']).toEqual(['result_firewall']);
    expect((result['relationship'] as Record<string, unknown>)['parent_record_id']).toBe(call['trace_id']);
    // A passed result is decided and traced too.
    expect(all.filter((t) => String(t['correlation_id']).endsWith('/result'))).toHaveLength(2);
    const file = readdirSync(join(state, 'traces')).find((n) => n.startsWith(`trace_${String(result['trace_id'])}`))!;
    const verify = runWard(['trace', 'verify', join(state, 'traces', file), '--state-dir', state, '--json'], { cwd });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    expect(everyFileText(state)).not.toContain(KEY);
    expect(readFileSync(log, 'utf8')).not.toContain(KEY);
    expect(stderr).not.toContain(KEY);
    expect(readFileSync(log, 'utf8')).toContain('tool result redacted: get-env');
  }, 60_000);

  it('block: the client gets an isError result naming the detector, never the key', async () => {
    const { cwd, state, ward } = setup('block');
    const p = await throughWard(ward, [EVERYTHING, 'stdio'], { cwd, env: { AWS_ACCESS_KEY_ID: KEY } });
    try {
      const r = await p.client.callTool({ name: 'get-env', arguments: {} });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toBe('Ward blocked this tool result: the result firewall flagged credentials (aws_access_key_id).');
      expect(JSON.stringify(r)).not.toContain(KEY);
      expect(wardOf(r)).toMatchObject({ result_action: 'block', reason_codes: ['mcp_result_credentials_detected'] });
    } finally {
      await p.close();
    }
    const result = traces(state).find((t) => String(t['correlation_id']).endsWith('/result'))!;
    expect(result['verdict']).toBe('block');
    expect(result['violations']).toEqual(['result_firewall']);
    expect(everyFileText(state)).not.toContain(KEY);
  }, 60_000);
});
