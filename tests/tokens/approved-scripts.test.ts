import { describe, expect, it } from 'vitest';
import { addSeconds, nowUTC, type JsonObject } from '../../src/canon/index.js';
import { generateSigningKey } from '../../src/keys/index.js';
import { matchApprovedScript, signApprovedScriptEntry, verifyApprovedScriptRegistry, type SignApprovedScriptOptions } from '../../src/tokens/index.js';
import { intent } from '../trace/fixtures.js';
import { POLICY_DIGEST, referenceVerify } from './helpers.js';

const key = generateSigningKey();
const SCRIPT_HASH = '4a132cd1a51cc226c73b0cbae9528905fbbaa80b7fe06bb632a62d9647001c11';
const step = (tool: string, endpoint: string) => ({
  tool_name: tool,
  args: {},
  targets: [{ kind: 'path', value: '/tmp/x', operation: '', sensitivity: '', endpoint_class: endpoint, endpoint_domain: '', destructive: false, discovery_method: 'unknown', read_only_hint: false, destructive_hint: false, idempotent_hint: false, open_world_hint: false }],
  arg_provenance: [],
});
const scriptIntent = () =>
  intent({ tool_name: 'script', script_hash: SCRIPT_HASH, script: { steps: [step('tool.read', 'fs.read'), step('tool.write', 'fs.write')] } });

function entry(overrides: Partial<SignApprovedScriptOptions> = {}): JsonObject {
  return signApprovedScriptEntry({
    patternId: 'read-then-write',
    policyDigest: POLICY_DIGEST,
    scriptHash: SCRIPT_HASH,
    toolSequence: ['tool.read', 'tool.write'],
    scope: ['risk:high', 'tool:tool.read', 'tool:tool.write'],
    approver: 'alice',
    expiresAt: addSeconds(nowUTC(), 3600),
    now: nowUTC(),
    producerVersion: '0.1.0',
    key,
    ...overrides,
  });
}

describe('approved-script registry', () => {
  it('signs entries per §6.2 and verifies a registry in either layout', () => {
    const signed = entry();
    expect(referenceVerify(signed, key.publicKey)).toBe(true);
    expect(verifyApprovedScriptRegistry({ entries: [signed] }, [key], nowUTC())[0]!.pattern_id).toBe('read-then-write');
    expect(verifyApprovedScriptRegistry([signed], [key], nowUTC()).length).toBe(1);
  });

  it('checks expiry before the signature, and names the failing entry', () => {
    const expired = { ...entry({ expiresAt: addSeconds(nowUTC(), -1) }), approver_identity: 'tampered' };
    expect(() => verifyApprovedScriptRegistry([entry(), expired], [key], nowUTC())).toThrow(
      'approved script registry verification failed at entry 1: approved script entry read-then-write is expired',
    );
    expect(() => verifyApprovedScriptRegistry([{ ...entry(), approver_identity: 'bob' }], [key], nowUTC())).toThrow(
      'at entry 0: approved script entry read-then-write signature: signed_digest mismatch',
    );
    expect(() => verifyApprovedScriptRegistry([entry()], [], nowUTC())).toThrow('verify key not configured');
  });

  it('matches the same policy, script hash and tool sequence within scope', () => {
    const entries = verifyApprovedScriptRegistry([entry()], [key], nowUTC());
    expect(matchApprovedScript(entries, scriptIntent(), POLICY_DIGEST, nowUTC())).toMatchObject({ matched: true });
    expect(matchApprovedScript(entries, scriptIntent(), 'f'.repeat(64), nowUTC())).toEqual({ matched: false, reason: 'approved_script_not_found' });
    expect(matchApprovedScript(entries, intent({}), POLICY_DIGEST, nowUTC())).toEqual({ matched: false, reason: 'not_script' });
    expect(matchApprovedScript(entries, scriptIntent(), POLICY_DIGEST, addSeconds(nowUTC(), 7200)).matched).toBe(false);
  });

  it('refuses intents outside the scope: risk, tools, endpoints and unknown kinds', () => {
    const match = (scope: string[]) =>
      matchApprovedScript(verifyApprovedScriptRegistry([entry({ scope })], [key], nowUTC()), scriptIntent(), POLICY_DIGEST, nowUTC()).matched;
    expect(match(['risk:low'])).toBe(false);
    expect(match(['tool:tool.read'])).toBe(false);
    expect(match(['endpoint:fs.read', 'endpoint:fs.write', 'workspace_prefix:/repo'])).toBe(true);
    expect(match(['endpoint:fs.read'])).toBe(false);
    expect(match(['mystery:x'])).toBe(false);
    expect(match(['*'])).toBe(true);
  });
});
