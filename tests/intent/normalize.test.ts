import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { intentDigest, normalizeIntent } from '../../src/intent/index.js';
import { goUrlHostname } from '../../src/intent/url.js';
import { isCredentialKey, looksLikeSecretMaterial } from '../../src/intent/secrets.js';
import { inferEndpointClass } from '../../src/intent/targets.js';

const base = () => ({
  tool_name: 'tool.write',
  args: {},
  targets: [{ kind: 'path', value: '/tmp/x', operation: 'write' }],
  context: { identity: 'a', workspace: '/w', risk_class: 'low' } as Record<string, unknown>,
});

function errorOf(mutate: (i: Record<string, any>) => void): string {
  const i: Record<string, any> = base();
  mutate(i);
  try {
    normalizeIntent(i);
  } catch (err) {
    return (err as Error).message;
  }
  return '(no error)';
}

describe('intent validation errors (gate.md §1.7), byte for byte', () => {
  const cases: [string, (i: Record<string, any>) => void][] = [
    ['tool_name is required', (i) => (i.tool_name = '  ')],
    ['args contains empty key', (i) => (i.args = { ' ': 1 })],
    ['script.steps must not be empty', (i) => (i.script = { steps: [] })],
    ['script.steps exceeds max supported steps (64)', (i) => (i.script = { steps: Array.from({ length: 65 }, () => ({ tool_name: 't' })) })],
    ['script.steps[1].tool_name is required', (i) => (i.script = { steps: [{ tool_name: 'a' }, { tool_name: '' }] })],
    ['script.steps[0].args must be a JSON object', (i) => (i.script = { steps: [{ tool_name: 'a', args: [1] }] })],
    ['targets require kind and value', (i) => (i.targets = [{ kind: 'path' }])],
    ['unsupported target kind: disk', (i) => (i.targets = [{ kind: 'Disk', value: 'x' }])],
    ['unsupported endpoint class: fs.mutate', (i) => (i.targets = [{ kind: 'path', value: 'x', endpoint_class: 'FS.Mutate' }])],
    ['unsupported discovery method: carrier_pigeon', (i) => (i.targets = [{ kind: 'path', value: 'x', discovery_method: 'Carrier-Pigeon' }])],
    ['arg provenance requires arg_path and source', (i) => (i.arg_provenance = [{ arg_path: 'x' }])],
    ['unsupported provenance source: rumor', (i) => (i.arg_provenance = [{ arg_path: 'x', source: 'RUMOR' }])],
    ['invalid provenance integrity_digest: abc', (i) => (i.arg_provenance = [{ arg_path: 'x', source: 'user', integrity_digest: 'ABC' }])],
    ['skill provenance requires skill_name, source, and publisher', (i) => (i.skill_provenance = { skill_name: 's' })],
    ['invalid skill provenance digest: 12', (i) => (i.skill_provenance = { skill_name: 's', source: 'x', publisher: 'p', digest: '12' })],
    ['context.identity is required', (i) => (i.context.identity = '')],
    ['context.workspace is required', (i) => (i.context.workspace = ' ')],
    ['context.risk_class is required', (i) => delete i.context.risk_class],
    ['context.context_set_digest must be sha256 hex', (i) => (i.context.context_set_digest = 'xyz')],
    ['context.credential_ttl_seconds must be >= 0', (i) => (i.context.credential_ttl_seconds = -1)],
    ['context.credential_source is unsupported: pastebin', (i) => (i.context.credential_source = 'pastebin')],
    ['context.credential_access_type is unsupported: forever', (i) => (i.context.credential_access_type = 'forever')],
    ['context.context_evidence_mode must be best_effort or required', (i) => (i.context.context_evidence_mode = 'maybe')],
    ['context.phase must be plan or apply', (i) => (i.context.phase = 'deploy')],
    ['context.sandbox.network_mode is unsupported: wide', (i) => (i.context.sandbox = { network_mode: 'wide' })],
    ['context.sandbox.timeout_seconds must be >= 0', (i) => (i.context.sandbox = { timeout_seconds: -5 })],
    ['context.sandbox.evidence_digest must be sha256 hex', (i) => (i.context.sandbox = { evidence_digest: 'nope' })],
    ['context.sandbox.writable_paths must not contain raw environment variable assignments', (i) => (i.context.sandbox = { writable_paths: ['AWS_KEY=abc'] })],
    ['context.sandbox.evidence_ref must not contain secret-like sandbox material', (i) => (i.context.sandbox = { evidence_ref: 'abcdef1234567890xyz' })],
    ['context.agent_identity.manifest_digest must be sha256 hex', (i) => (i.context.agent_identity = { manifest_digest: 'm' })],
    ['context.agent_identity.approved_at must be on or after issued_at', (i) => (i.context.agent_identity = { issued_at: '2026-01-02T00:00:00Z', approved_at: '2026-01-01T00:00:00Z' })],
    ['context.agent_identity.expires_at must be after issued_at', (i) => (i.context.agent_identity = { issued_at: '2026-01-02T00:00:00Z', expires_at: '2026-01-02T00:00:00Z' })],
    ['delegation.requester_identity is required', (i) => (i.delegation = {})],
    ['delegation.chain[0] requires delegator_identity and delegate_identity', (i) => (i.delegation = { requester_identity: 'r', chain: [{ delegator_identity: 'x' }] })],
    ['delegation.chain[1] delegator_identity must match delegation.chain[0].delegate_identity', (i) => (i.delegation = { requester_identity: 'r', chain: [{ delegator_identity: 'a', delegate_identity: 'b' }, { delegator_identity: 'c', delegate_identity: 'r' }] })],
    ['delegation.chain last delegate_identity must match delegation.requester_identity', (i) => (i.delegation = { requester_identity: 'r', chain: [{ delegator_identity: 'a', delegate_identity: 'b' }] })],
    ['delegation.expires_at must be after issued_at', (i) => (i.delegation = { requester_identity: 'r', issued_at: '2026-01-02T00:00:00Z', expires_at: '2026-01-01T00:00:00Z' })],
    ['args.api_key must not contain raw credential material; use credential references or digests instead', (i) => (i.args = { api_key: 'sk-live-123' })],
    ['args.x[0].token must not contain raw credential material; use credential references or digests instead', (i) => (i.args = { x: [{ token: 'ghp_abc' }] })],
  ];
  for (const [message, mutate] of cases) {
    it(message, () => expect(errorOf(mutate)).toBe(message));
  }

  it('refuses wrong JSON types as parse errors, not as normalization errors', () => {
    expect(errorOf((i) => (i.args = []))).toMatch(/^parse intent json: args must be a JSON object/);
    expect(errorOf((i) => (i.tool_name = 7))).toMatch(/^parse intent json: tool_name must be a string/);
    expect(errorOf((i) => (i.created_at = '2026-01-01 00:00:00Z'))).toMatch(/^parse intent json:/);
  });

  it('refuses two args keys that trim to the same key (Go picks one at random)', () => {
    expect(errorOf((i) => (i.args = { a: 1, ' a': 2 }))).toBe('args contains duplicate key after trimming: a');
  });
});

describe('secret heuristics (§1.5)', () => {
  it('flags credential-like keys but not references to them', () => {
    expect(isCredentialKey('API-Key')).toBe(true);
    expect(isCredentialKey('github_token')).toBe(true);
    expect(isCredentialKey('token_ref')).toBe(false);
    expect(isCredentialKey('credential_ttl_seconds')).toBe(false);
    expect(isCredentialKey('path')).toBe(false);
  });
  it('treats references and digests as safe and known prefixes as secrets', () => {
    expect(looksLikeSecretMaterial('env:GITHUB_TOKEN')).toBe(false);
    expect(looksLikeSecretMaterial('a'.repeat(64))).toBe(false);
    expect(looksLikeSecretMaterial('AKIA1')).toBe(true);
    expect(looksLikeSecretMaterial('short1')).toBe(false);
    expect(looksLikeSecretMaterial('has space 1234567890')).toBe(false);
    expect(looksLikeSecretMaterial('abcdefgh12345678')).toBe(true);
  });
});

describe('target inference (§1.4)', () => {
  it('uses the tool name hint only when the operation says nothing', () => {
    expect(inferEndpointClass('path', '', 'mcp/files.delete')).toBe('fs.delete');
    expect(inferEndpointClass('path', 'read', 'mcp/files.delete')).toBe('fs.read');
    expect(inferEndpointClass('other', '', 'bash.run')).toBe('proc.exec');
    expect(inferEndpointClass('repo', 'write', 'x')).toBe('other');
  });
  it('extracts URL hosts the way Go does', () => {
    expect(goUrlHostname('https://API.Example.com:8443/v1?q=1')).toBe('API.Example.com');
    expect(goUrlHostname('https://user:pw@host.example/x')).toBe('host.example');
    expect(goUrlHostname('http://[::1]:8080/')).toBe('::1');
    expect(goUrlHostname('example.com/no-scheme')).toBe('');
    expect(goUrlHostname('https://bad port:x/')).toBe('');
  });
});

describe('normalization properties', () => {
  it('whitespace around strings and target order never change the digest', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('/a', '/b', '/c', '/d'), { minLength: 1, maxLength: 4 }), fc.string({ maxLength: 5 }), (paths, pad) => {
        const ws = ' '.repeat(pad.length % 3);
        const targets = paths.map((p) => ({ kind: 'path', value: p, operation: 'read' }));
        const a = { ...base(), targets };
        const b = { ...base(), tool_name: `${ws}TOOL.WRITE${ws}`, targets: [...targets].reverse().map((t) => ({ ...t, value: ws + t.value + ws })) };
        expect(intentDigest(normalizeIntent(b))).toBe(intentDigest(normalizeIntent(a)));
      }),
    );
  });
});
