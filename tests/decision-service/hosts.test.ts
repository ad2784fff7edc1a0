import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HostResolver } from '../../src/decision/host-resolution.js';
import { loadServiceConfig } from '../../src/decision-service/config.js';
import { evaluateDecision } from '../../src/decision-service/evaluate.js';
import { REPO, tempDir, ward } from '../cli/run.js';

/*
 * Issue 26, finding 4, through the hosts that a coding agent meets: the shipped low-risk baseline
 * denies every loopback and metadata spelling the issue found allowed (`ward hook claude-code`,
 * the real CLI), and the decision service judges a name by what it resolves to (an injected
 * resolver: the sandbox has no DNS).
 */

const LOWRISK = join(REPO, 'policies', 'baseline-lowrisk.yaml');

function webFetch(url: string): { decision: string; reason: string; traces: number } {
  const cwd = tempDir('ward-hook-hosts-');
  const state = join(cwd, '.ward');
  const input = JSON.stringify({
    session_id: 's',
    transcript_path: '/tmp/t.jsonl',
    cwd: '/workspace',
    hook_event_name: 'PreToolUse',
    tool_name: 'WebFetch',
    tool_input: { url, prompt: 'read it' },
    tool_use_id: 'toolu_1',
  });
  const r = ward(['hook', 'claude-code', '--policy', LOWRISK, '--state-dir', state], { cwd, input });
  expect(r.code, r.stderr).toBe(0);
  const out = JSON.parse(r.stdout).hookSpecificOutput;
  return { decision: out.permissionDecision, reason: out.permissionDecisionReason, traces: readdirSync(join(state, 'traces')).length };
}

describe('the shipped low-risk baseline through ward hook claude-code', () => {
  it('denies every loopback and metadata spelling of finding 4, each with one trace', () => {
    for (const url of [
      'http://0:8080/',
      'http://0.0.0.0/',
      'http://[::]/',
      'http://127.0.0.2/',
      'http://localhost/',
      'http://foo.localhost/',
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://metadata.goog/',
      'http://instance-data/latest/',
      'http://[fd00:ec2::254]/latest/',
      'http://169.254.170.2/v2/credentials',
      'http://100.100.100.200/latest/meta-data/',
      'http://2852039166/latest/',
    ]) {
      const r = webFetch(url);
      expect([url, r.decision, r.traces]).toEqual([url, 'deny', 1]);
      expect(r.reason).toContain('endpoint_domain_denied');
    }
  });

  it('still allows an ordinary site (low risk: a name that does not resolve here is judged by its name)', () => {
    expect(webFetch('https://docs.example.com/guide').decision).toBe('allow');
  });
});

describe('the decision service resolves names before deciding', () => {
  it('blocks 169.254.169.254.nip.io by the address it resolves to and records the addresses in the trace', async () => {
    const cwd = tempDir('ward-service-hosts-');
    const cfg = loadServiceConfig({ policy: LOWRISK, cwd, stateDir: join(cwd, '.ward'), keyMode: 'dev', env: {}, serve: false });
    const asked: string[] = [];
    cfg.hostResolver = new HostResolver({
      lookup: async (name) => {
        asked.push(name);
        return name === '169.254.169.254.nip.io' ? ['169.254.169.254'] : ['93.184.216.34'];
      },
    });
    const call = (url: string) => ({
      name: 'fetch_url',
      args: { url },
      targets: [{ kind: 'url', value: url, operation: 'read' }],
      context: { identity: 'agent-1', workspace: '/workspace', risk_class: 'low' },
    });
    const blocked = await evaluateDecision(cfg, { payload: call('http://169.254.169.254.nip.io/latest/meta-data/'), adapter: 'mcp' });
    expect(blocked.output['verdict']).toBe('block');
    expect(blocked.output['reason_codes']).toContain('endpoint_resolved_address_denied');
    const trace = JSON.parse(readFileSync(String(blocked.output['trace_path']), 'utf8'));
    expect(trace.canonical_targets).toEqual([{ kind: 'url', value: 'http://169.254.169.254.nip.io/latest/meta-data/', resolved_addresses: ['169.254.169.254'] }]);
    const allowed = await evaluateDecision(cfg, { payload: call('https://api.example.com/v1'), adapter: 'mcp' });
    expect(allowed.output['verdict']).toBe('allow');
    expect(asked).toEqual(['169.254.169.254.nip.io', 'api.example.com']);
  });
});
