import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, tempDir, ward } from './run.js';

/* Issue 26, finding 4, through `ward gate eval` with the shipped low-risk baseline. */

const LOWRISK = join(REPO, 'policies', 'baseline-lowrisk.yaml');

function gateEval(url: string): { code: number; json: { verdict: string; reason_codes: string[] } } {
  const dir = tempDir('ward-cli-hosts-');
  const intentPath = join(dir, 'intent.json');
  writeFileSync(
    intentPath,
    JSON.stringify({
      tool_name: 'http.get',
      args: { url },
      targets: [{ kind: 'url', value: url, operation: 'read' }],
      arg_provenance: [{ arg_path: '$.url', source: 'user' }],
      context: { identity: 'agent', workspace: '/w', risk_class: 'low' },
    }),
  );
  const r = ward(['gate', 'eval', '--policy', LOWRISK, '--intent', intentPath, '--json', '--state-dir', join(dir, '.ward')], { cwd: dir });
  return { code: r.code, json: JSON.parse(r.stdout) };
}

describe('ward gate eval: hosts that mean loopback or metadata', () => {
  it('blocks them under the low-risk baseline (exit 3) and allows an ordinary site (exit 0)', () => {
    for (const url of ['http://0/', 'http://[::1]:3000/', 'http://169.254.170.2/v2/credentials', 'http://100.100.100.200/']) {
      const r = gateEval(url);
      expect([url, r.code, r.json.verdict]).toEqual([url, 3, 'block']);
      expect(r.json.reason_codes).toContain('endpoint_domain_denied');
    }
    expect(gateEval('https://docs.example.com/').json.verdict).toBe('allow');
  });
});
