import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRFC3339 } from '../../src/canon/gotime.js';
import { applyMcpTrust, evaluateMcpTrust, parseTrustSnapshot } from '../../src/decision-service/trust.js';
import { ERROR_CODES } from '../../src/errors.js';
import { loadPolicyFile } from '../../src/policy/load.js';
import type { McpTrustConfig } from '../../src/policy/types.js';
import { REPO, ward, tempDir } from '../cli/run.js';
import { mkdirSync } from 'node:fs';
import { callJson, compat } from './helpers.js';

const FIXTURES = REPO;
const SNAPSHOT = 'fixtures/mcp-compat/trust_snapshot.json';
function withSnapshot(dir: string): void {
  mkdirSync(join(dir, 'fixtures', 'mcp-compat'), { recursive: true });
  writeFileSync(join(dir, SNAPSHOT), readFileSync(compat('trust_snapshot.json')));
}
const NOW = parseRFC3339('2026-03-12T00:00:00Z');
const config = (over: Partial<McpTrustConfig> = {}): McpTrustConfig => ({
  ...loadPolicyFile(compat('policy-trust.yaml')).policy.mcp_trust,
  ...over,
});
const server = (server_id: string, publisher = '') => ({ server_id, server_name: '', publisher, source: '', endpoint: '' });
const trust = (id: string | undefined, over: Partial<McpTrustConfig> = {}, risk = 'high') =>
  evaluateMcpTrust({ config: config(over), server: id === undefined ? undefined : server(id), riskClass: risk, now: NOW, cwd: FIXTURES });

describe('MCP trust decisions (§6.7)', () => {
  it('trusted, unknown, missing identifier, unavailable and invalid snapshots', () => {
    expect(trust('github')).toMatchObject({ status: 'trusted', reason_codes: ['mcp_trust_verified'], enforced: false, required: true, score: 0.95, publisher_allowed: true });
    expect(trust('GitHub').status).toBe('trusted');
    expect(trust('nobody')).toMatchObject({ status: 'unknown', reason_codes: ['mcp_trust_server_unknown'], enforced: true });
    expect(trust(undefined)).toMatchObject({ status: 'missing', reason_codes: ['mcp_trust_identifier_missing'] });
    expect(trust('github', { snapshot: 'missing.json' })).toMatchObject({ status: 'missing', reason_codes: ['mcp_trust_snapshot_unavailable'] });
    expect(trust('github', { snapshot: 'fixtures/mcp-compat/policy.yaml' })).toMatchObject({ status: 'invalid', reason_codes: ['mcp_trust_snapshot_invalid'] });
  });

  it('collects every failing check and takes the status from the first', () => {
    expect(trust('sketchy')).toMatchObject({
      status: 'untrusted',
      reason_codes: ['mcp_trust_below_threshold', 'mcp_trust_publisher_untrusted'],
      enforced: true,
    });
    expect(trust('revoked').reason_codes).toEqual(['mcp_trust_status_untrusted']);
    expect(trust('github', { max_age: '24h0m0s', max_age_seconds: 86400 })).toMatchObject({ status: 'stale', reason_codes: ['mcp_trust_stale'] });
    expect(trust('github', { require_registry: true })).toMatchObject({ status: 'invalid', reason_codes: ['mcp_trust_registry_unverified'] });
  });

  it('only required risk classes are enforced', () => {
    expect(trust('nobody', {}, 'low')).toMatchObject({ required: false, enforced: false });
  });

  it('snapshots with duplicate keys or entries without identifiers are invalid', () => {
    expect(() => parseTrustSnapshot('{"entries":[{"server_id":"A"},{"server_id":"a"}]}')).toThrow(/duplicate entry "a"/);
    expect(() => parseTrustSnapshot('{"entries":[{"status":"trusted"}]}')).toThrow(/requires server_id or server_name/);
    expect(parseTrustSnapshot('{"entries":[{"server_name":"Only Name"}]}').entries.has('only name')).toBe(true);
  });

  it('a snapshot that cannot be used is a coded WardError (ERR_MCP_TRUST_SNAPSHOT_INVALID)', () => {
    for (const text of ['[', '[]', '{"entries":{}}', '{"entries":[null]}', '{"entries":[{"server_id":5}]}', '{"entries":[{"server_id":"a","registry_verification":[]}]}']) {
      expect(() => parseTrustSnapshot(text), text).toThrow(expect.objectContaining({ code: ERROR_CODES.MCP_TRUST_SNAPSHOT_INVALID, exitCode: 6 }));
    }
    expect(() => parseTrustSnapshot('{"entries":[{"server_id":"a","status":1}]}')).toThrow('trust snapshot entries[0].status must be a string');
  });

  it('enforcement raises the verdict to the action, keeps block and dry_run, adds mcp_trust_policy', () => {
    const d = trust('nobody');
    const base = { reasonCodes: ['r'], violations: [] };
    expect(applyMcpTrust({ ...base, verdict: 'allow' }, d, 'require_approval')).toEqual({ verdict: 'require_approval', reasonCodes: ['mcp_trust_server_unknown', 'r'], violations: ['mcp_trust_policy'] });
    expect(applyMcpTrust({ ...base, verdict: 'require_approval' }, d, 'block').verdict).toBe('block');
    expect(applyMcpTrust({ ...base, verdict: 'dry_run' }, d, 'block').verdict).toBe('dry_run');
    expect(applyMcpTrust({ ...base, verdict: 'allow' }, trust('github'), 'block')).toEqual({ verdict: 'allow', reasonCodes: ['mcp_trust_verified', 'r'], violations: [] });
  });
});

describe('mcp proxy --call with mcp_trust', () => {
  it('a trusted server is allowed and the trust decision is in the output and the signed trace', async () => {
    const dir = tempDir();
    withSnapshot(dir);
    const r = await callJson({ call: compat('call-mcp-read.json'), policy: compat('policy-trust.yaml') }, { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.json['reason_codes']).toEqual(['matched_rule_allow_reads', 'mcp_trust_verified']);
    expect(r.json['mcp_trust']).toMatchObject({ status: 'trusted', server_id: 'github' });
    const trace = JSON.parse(readFileSync(String(r.json['trace_path']), 'utf8'));
    expect(trace.mcp_trust).toEqual(r.json['mcp_trust']);
  });

  it('an unknown server is blocked with mcp_trust_policy, even when the call names no risk class', async () => {
    const dir = tempDir();
    withSnapshot(dir);
    writeFileSync(join(dir, 'call.json'), JSON.stringify({ name: 'read_file', server: { server_id: 'nobody' } }));
    const r = await callJson({ call: 'call.json', policy: compat('policy-trust.yaml') }, { cwd: dir });
    expect([r.code, r.json['verdict'], r.json['violations']]).toEqual([3, 'block', ['mcp_trust_policy']]);
    expect(r.json['reason_codes']).toContain('mcp_trust_server_unknown');
  });
});

describe('ward mcp verify', () => {
  it('exit 0 for a trusted server, 3 for an untrusted one, with the reference output fields', () => {
    const ok = ward(['mcp', 'verify', '--policy', compat('policy-trust.yaml'), '--server', compat('server-github.json'), '--json'], { cwd: FIXTURES });
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({
      ok: true,
      server_id: 'github',
      server_name: 'GitHub MCP',
      trust_model: 'local_snapshot',
      snapshot_path: SNAPSHOT,
      verdict: 'allow',
      reason_codes: ['mcp_trust_verified'],
      violations: [],
      mcp_trust: { status: 'trusted' },
    });
    const bad = ward(['mcp', 'verify', '--policy', compat('policy-trust.yaml'), '--server', compat('server-sketchy.json'), '--json'], { cwd: FIXTURES });
    expect(bad.code).toBe(3);
    expect(JSON.parse(bad.stdout)).toMatchObject({ verdict: 'block', violations: ['mcp_trust_policy'] });
    const unknown = ward(['mcp', 'verify', '--policy', compat('policy-trust.yaml'), '--server', compat('server-unknown.json')], { cwd: FIXTURES });
    expect(unknown.code).toBe(3);
    expect(unknown.stdout).toMatch(/^mcp verify: server=nobody-knows verdict=block\ntrust: unknown/);
  });

  it('--risk-class outside the required classes is not enforced; require_approval action exits 4', () => {
    const low = ward(['mcp', 'verify', '--policy', compat('policy-trust.yaml'), '--server', compat('server-unknown.json'), '--risk-class', 'low', '--json'], { cwd: FIXTURES });
    expect([low.code, JSON.parse(low.stdout).verdict]).toEqual([0, 'allow']);
    const dir = tempDir();
    withSnapshot(dir);
    writeFileSync(join(dir, 'p.yaml'), readFileSync(compat('policy-trust.yaml'), 'utf8').replace('action: block', 'action: require_approval'));
    const ask = ward(['mcp', 'verify', '--policy', 'p.yaml', '--server', compat('server-unknown.json'), '--json'], { cwd: dir });
    expect([ask.code, JSON.parse(ask.stdout).verdict]).toEqual([4, 'require_approval']);
  });

  it('no mcp_trust block: allow; a server without identity: exit 6', () => {
    const none = ward(['mcp', 'verify', '--policy', compat('policy.yaml'), '--server', compat('server-unknown.json'), '--json'], { cwd: FIXTURES });
    expect([none.code, JSON.parse(none.stdout).verdict]).toEqual([0, 'allow']);
    const dir = tempDir();
    writeFileSync(join(dir, 's.json'), '{"publisher":"acme"}');
    const noId = ward(['mcp', 'verify', '--policy', compat('policy-trust.yaml'), '--server', 's.json', '--json'], { cwd: dir });
    expect([noId.code, JSON.parse(noId.stdout).error]).toEqual([6, 'server info requires server_id or server_name']);
  });
});
