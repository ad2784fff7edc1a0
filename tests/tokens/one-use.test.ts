import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addSeconds, formatRFC3339Nano, nowUTC, parseGoDuration, type JsonObject } from '../../src/canon/index.js';
import { addDuration } from '../../src/canon/duration.js';
import { caselessKey } from '../../src/canon/fold.js';
import { generateSigningKey, type SigningKey } from '../../src/keys/index.js';
import { parsePolicyYaml } from '../../src/policy/load.js';
import { decideGate, type GateRequest, type GateRuntime } from '../../src/decision/gate-run.js';
import { approvalStep } from '../../src/decision/token-steps.js';
import { gateEvalSteps } from '../../src/decision/steps.js';
import { FileTokenLedger } from '../../src/state/token-ledger.js';
import {
  approvalTokenPayload,
  evaluateApprovals,
  MAX_APPROVAL_TOKEN_TTL_NS,
  normalizeApprovalToken,
  mintDelegationToken,
  readApprovedScriptRegistry,
  readTokenFile,
  signApprovedScriptEntry,
  validateApprovalToken,
  validateDelegationToken,
  verifyApprovedScriptEntry,
  type ApprovalBinding,
  type ParsedToken,
} from '../../src/tokens/index.js';
import { signDigestedJson } from '../../src/trace/sign.js';
import { approvalFixtures, HOUR, INTENT_DIGEST, POLICY_DIGEST } from './helpers.js';
import { pathIntent } from '../decision/helpers.js';

const key = generateSigningKey();
const { mint, binding, codeOf } = approvalFixtures(key);


/** Re-sign a token after editing its fields, as an approver holding the key could. */
function resign(token: JsonObject, edit: Partial<Record<'created_at' | 'expires_at', string>>, signer: SigningKey = key): JsonObject {
  const normalized = normalizeApprovalToken({ ...token, ...edit });
  const payload = approvalTokenPayload(normalized);
  return { ...payload, signature: signDigestedJson(payload, signer) };
}



const tokens = (...values: unknown[]): ParsedToken[] => values.map((value, i) => ({ source: `t${i}.json`, value: value as JsonObject }));

describe('approval token lifetime is capped at 24h', () => {
  it('mint accepts 24h and refuses anything longer, including 876000h', () => {
    expect(MAX_APPROVAL_TOKEN_TTL_NS).toBe(parseGoDuration('24h'));
    expect(codeOf(mint({ ttlNs: parseGoDuration('24h') }))).toBe('ok');
    expect(() => mint({ ttlNs: parseGoDuration('24h') + 1n })).toThrow('ttl must be at most 24h');
    expect(() => mint({ ttlNs: parseGoDuration('876000h') })).toThrow('ttl must be at most 24h');
  });

  it('verify refuses a signed token whose expires_at is more than 24h after created_at', () => {
    const token = mint();
    const created = normalizeApprovalToken(token).created_at;
    const long = resign(token, { expires_at: formatRFC3339Nano(addDuration(created, parseGoDuration('876000h'))) });
    expect(codeOf(long)).toBe('approval_token_ttl_exceeded');
    const justOver = resign(token, { expires_at: formatRFC3339Nano(addDuration(created, MAX_APPROVAL_TOKEN_TTL_NS + 1n)) });
    expect(codeOf(justOver)).toBe('approval_token_ttl_exceeded');
    const exact = resign(token, { expires_at: formatRFC3339Nano(addDuration(created, MAX_APPROVAL_TOKEN_TTL_NS)) });
    expect(codeOf(exact)).toBe('ok');
  });

  it('a created_at in the future cannot stretch the lifetime: expires_at is at most 24h from now', () => {
    const future = addSeconds(nowUTC(), 30 * 86400);
    const token = mint({ now: future }); // a one-hour token, but 30 days ahead
    expect(codeOf(token)).toBe('approval_token_ttl_exceeded');
    // An approver's clock a minute ahead is tolerated (5 minutes of skew), ten minutes is not.
    expect(codeOf(mint({ now: addSeconds(nowUTC(), 60), ttlNs: MAX_APPROVAL_TOKEN_TTL_NS }))).toBe('ok');
    expect(codeOf(mint({ now: addSeconds(nowUTC(), 600), ttlNs: MAX_APPROVAL_TOKEN_TTL_NS }))).toBe('approval_token_ttl_exceeded');
  });

  it('expiry is still checked first: an expired long-lived token is approval_token_expired', () => {
    const token = mint({ now: addSeconds(nowUTC(), -3 * 86400) });
    const created = normalizeApprovalToken(token).created_at;
    const long = resign(token, { expires_at: formatRFC3339Nano(addSeconds(created, 86400 + 60)) });
    expect(codeOf(long)).toBe('approval_token_expired');
  });
});

describe('token signature objects hold only the signed construction', () => {
  it('an extra member inside signature is approval_token_signature_invalid', () => {
    const token = mint();
    const signature = token['signature'] as JsonObject;
    expect(codeOf(token)).toBe('ok');
    expect(codeOf({ ...token, signature: { ...signature, approved_by: 'ciso' } })).toBe('approval_token_signature_invalid');
    const result = validateApprovalToken({ ...token, signature: { ...signature, approved_by: 'ciso' } }, binding());
    expect(result.ok ? '' : result.message).toContain('approved_by');
  });
});

describe('delegation tokens and approved-script entries: the same signature rule', () => {
  it('an extra signature member makes a delegation token delegation_token_signature_invalid', () => {
    const token = mintDelegationToken({ delegator: 'agent.lead', delegate: 'agent.worker', scope: ['write'], ttlNs: HOUR, now: nowUTC(), producerVersion: 'x', key });
    const link = { delegator_identity: 'agent.lead', delegate_identity: 'agent.worker', scope_class: 'write' };
    const b = { verifyKeys: [key], intentDigest: INTENT_DIGEST, policyDigest: POLICY_DIGEST, requiredScopes: ['write'], now: nowUTC() };
    expect(validateDelegationToken(token, link, b).ok).toBe(true);
    const extra = { ...token, signature: { ...(token['signature'] as JsonObject), delegated_by: 'ciso' } };
    expect(validateDelegationToken(extra, link, b)).toMatchObject({ ok: false, code: 'delegation_token_signature_invalid' });
  });

  it('an extra signature member fails an approved-script entry', () => {
    const entry = signApprovedScriptEntry({
      patternId: 'nightly',
      policyDigest: POLICY_DIGEST,
      scriptHash: 'c'.repeat(64),
      toolSequence: ['tool.read'],
      scope: ['*'],
      approver: 'lead',
      now: nowUTC(),
      expiresAt: addSeconds(nowUTC(), 3600),
      producerVersion: 'x',
      key,
    });
    expect(verifyApprovedScriptEntry(entry, [key], nowUTC()).pattern_id).toBe('nightly');
    const extra = { ...entry, signature: { ...(entry['signature'] as JsonObject), note: 'x' } };
    expect(() => verifyApprovedScriptEntry(extra, [key], nowUTC())).toThrow('unknown member note');
  });
});

describe('approver identities and keys', () => {
  const run = (list: ParsedToken[], b: Partial<ApprovalBinding>, required = 2) =>
    evaluateApprovals({ ...binding(b), tokens: list, requiredApprovals: required, requireDistinct: true });

  it('folds case (and compatibility forms) when comparing approvers', () => {
    expect(caselessKey('alice')).toBe(caselessKey('ALICE'));
    expect(caselessKey('Alice')).toBe(caselessKey('ａｌｉｃｅ'));
    expect(caselessKey('alice')).not.toBe(caselessKey('bob'));
  });

  it('alice and ALICE are one approver even with two keys', () => {
    const k2 = generateSigningKey();
    const result = run(tokens(mint({ approver: 'alice' }), mint({ approver: 'ALICE', key: k2 })), { verifyKeys: [key, k2] });
    expect(result).toMatchObject({ granted: false, reasonCodes: ['approval_distinct_approvers_required'], validCount: 2 });
    expect(result.approvers).toEqual(['alice']);
    expect(result.distinctApprovers).toBe(1);
  });

  it('one key signing two identities counts once', () => {
    const result = run(tokens(mint({ approver: 'alice' }), mint({ approver: 'bob' })), { verifyKeys: [key] });
    expect(result).toMatchObject({ granted: false, reasonCodes: ['approval_distinct_approvers_required'], distinctApprovers: 1 });
    expect(result.approvers).toEqual(['alice', 'bob']);
  });

  it('distinct approvers with distinct keys are granted', () => {
    const k2 = generateSigningKey();
    const result = run(tokens(mint({ approver: 'alice' }), mint({ approver: 'bob', key: k2 })), { verifyKeys: [key, k2] });
    expect(result).toMatchObject({ granted: true, reasonCodes: ['approval_granted'], distinctApprovers: 2 });
  });

  it('counts the largest set of approvers with a key each (a matching, not a minimum)', () => {
    const [k1, k2, k3] = [key, generateSigningKey(), generateSigningKey()];
    const keys = { verifyKeys: [k1, k2, k3] };
    // alice holds k1, k2 and k3; bob and carol both only k1: at most two can be paired with distinct keys.
    const list = tokens(
      mint({ approver: 'alice', key: k1 }),
      mint({ approver: 'alice', key: k2, reasonCode: 'b' }),
      mint({ approver: 'alice', key: k3, reasonCode: 'c' }),
      mint({ approver: 'bob', key: k1 }),
      mint({ approver: 'carol', key: k1 }),
    );
    expect(run(list, keys, 3)).toMatchObject({ granted: false, distinctApprovers: 2, reasonCodes: ['approval_distinct_approvers_required'] });
    expect(run(list, keys, 2)).toMatchObject({ granted: true, distinctApprovers: 2 });
    // bob signing with k2 frees k1 for carol and k3 for alice.
    const better = tokens(mint({ approver: 'alice', key: k3 }), mint({ approver: 'bob', key: k2 }), mint({ approver: 'carol', key: k1 }), mint({ approver: 'carol', key: k2, reasonCode: 'x' }));
    expect(run(better, keys, 3)).toMatchObject({ granted: true, distinctApprovers: 3 });
  });

  it('without require_distinct_approvers two tokens of one approver and key still count twice (reference)', () => {
    const result = evaluateApprovals({ ...binding(), tokens: tokens(mint({ reasonCode: 'a' }), mint({ reasonCode: 'b' })), requiredApprovals: 2, requireDistinct: false });
    expect(result.granted).toBe(true);
  });
});

describe('consumed tokens', () => {
  it('a valid token the ledger knows is approval_token_consumed; others still count', () => {
    const used = mint({ reasonCode: 'used' });
    const fresh = mint({ reasonCode: 'fresh' });
    const isConsumed = (id: string) => id === used['token_id'];
    const one = evaluateApprovals({ ...binding(), tokens: tokens(used), requiredApprovals: 1, requireDistinct: false, isConsumed });
    expect(one).toMatchObject({ granted: false, reasonCodes: ['approval_chain_insufficient', 'approval_token_consumed'], validCount: 0 });
    expect(one.entries[0]).toMatchObject({ token_id: used['token_id'], valid: false, error_code: 'approval_token_consumed' });
    const two = evaluateApprovals({ ...binding(), tokens: tokens(used, fresh), requiredApprovals: 1, requireDistinct: false, isConsumed });
    expect(two).toMatchObject({ granted: true, reasonCodes: ['approval_granted', 'approval_token_consumed'], validTokenIds: [fresh['token_id']] });
  });

  it('an invalid token is reported by its own failure, never as consumed', () => {
    const expired = mint({ now: addSeconds(nowUTC(), -7200) });
    const r = evaluateApprovals({ ...binding(), tokens: tokens(expired), requiredApprovals: 1, requireDistinct: false, isConsumed: () => true });
    expect(r.reasonCodes).toEqual(['approval_chain_insufficient', 'approval_token_expired']);
  });
});

describe('token files with duplicate keys are refused', () => {
  it('readTokenFile reports a duplicate member as an error (approval_token_invalid in the roll-up)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ward-dup-'));
    const token = mint();
    const text = JSON.stringify(token).replace('"approver_identity":"alice"', '"approver_identity":"alice","approver_identity":"mallory"');
    writeFileSync(join(dir, 'dup.json'), text);
    const parsed = readTokenFile('dup.json', dir);
    expect('error' in parsed && parsed.error).toContain('duplicate key "approver_identity"');
    const r = evaluateApprovals({ ...binding(), tokens: [parsed], requiredApprovals: 1, requireDistinct: false });
    expect(r).toMatchObject({ granted: false, reasonCodes: ['approval_chain_insufficient', 'approval_token_invalid'] });
    // A duplicate inside the signature object too.
    const sig = JSON.stringify(token).replace('"alg":"ed25519"', '"alg":"ed25519","alg":"none"');
    writeFileSync(join(dir, 'dup-sig.json'), sig);
    expect('error' in readTokenFile('dup-sig.json', dir)).toBe(true);
    writeFileSync(join(dir, 'ok.json'), JSON.stringify(token));
    expect(readTokenFile('ok.json', dir)).toEqual({ source: 'ok.json', value: token });
  });

  it('an approved-script registry with a repeated key is refused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ward-dup-'));
    writeFileSync(join(dir, 'registry.json'), '{"entries":[],"entries":[{"pattern_id":"x"}]}');
    expect(() => readApprovedScriptRegistry('registry.json', dir)).toThrow(/duplicate key "entries"/);
    writeFileSync(join(dir, 'ok.json'), '{"entries":[]}');
    expect(readApprovedScriptRegistry('ok.json', dir)).toEqual({ entries: [] });
  });
});

// ---- The gate's approval step with the ledger (decideGate, as every host runs it) ----

const POLICY = parsePolicyYaml(
  [
    'default_verdict: allow',
    'rules:',
    '  - name: writes-need-approval',
    '    priority: 1',
    '    effect: require_approval',
    '    match:',
    '      tool_names: [tool.write]',
    '  - name: pairs',
    '    priority: 1',
    '    effect: require_approval',
    '    min_approvals: 2',
    '    require_distinct_approvers: true',
    '    match:',
    '      tool_names: [tool.deploy]',
  ].join('\n') + '\n',
);

const INTENT = (tool = 'tool.write') => pathIntent(tool, '/tmp/x.txt', 'write', 'agent');

function runtime(extra: Partial<GateRuntime> = {}): GateRuntime {
  const state = mkdtempSync(join(tmpdir(), 'ward-ledger-rt-'));
  return {
    policy: POLICY,
    signingKey: key,
    traceFormat: 'ward',
    traceDir: join(state, 'traces'),
    rateLimitStatePath: join(state, 'rate.json'),
    profile: 'standard',
    ...extra,
  };
}

/** The digests a token must bind to, from a first decision without tokens. */
function digestsOf(rt: GateRuntime, tool = 'tool.write'): { intentDigest: string; policyDigest: string } {
  const t = decideGate(rt, { intent: INTENT(tool) }).trace;
  return { intentDigest: String(t['intent_digest']), policyDigest: String(t['policy_digest']) };
}

interface DecideOptions {
  simulate?: boolean;
  /** Approver keys besides the default one. */
  keys?: SigningKey[];
  tool?: string;
}

function decide(rt: GateRuntime, list: JsonObject[], opts: DecideOptions = {}): JsonObject {
  const step = approvalStep({ tokens: () => tokens(...list), verifyKeys: [key, ...(opts.keys ?? [])] });
  const req: GateRequest = { intent: INTENT(opts.tool), steps: gateEvalSteps(rt, { approvals: step }, { simulate: opts.simulate }) };
  return decideGate(rt, req).trace as JsonObject;
}

describe('one-use approval tokens in the gate (decideGate)', () => {
  it('a token grants one decision; the second use is refused with approval_token_consumed', () => {
    const rt = runtime();
    const token = mint({ ...digestsOf(rt) });
    const first = decide(rt, [token]);
    expect(first).toMatchObject({ verdict: 'allow', approval_token_ref: token['token_id'] });
    expect(first['reason_codes']).toContain('approval_granted');
    const second = decide(rt, [token]);
    expect(second['verdict']).toBe('require_approval');
    expect(second['reason_codes']).toEqual(expect.arrayContaining(['approval_token_consumed', 'approval_chain_insufficient']));
    // The ledger lives beside the traces, one entry per consumed token, 0600, naming the token.
    const dir = join(rt.traceDir, '..', 'token_ledger');
    const names = readdirSync(dir);
    expect(names).toHaveLength(1);
    const entry = JSON.parse(readFileSync(join(dir, names[0]!), 'utf8'));
    expect(entry).toMatchObject({ schema_id: 'ward.token_ledger_entry', kind: 'approval', token_id: token['token_id'], expires_at: token['expires_at'] });
  });

  it('a fresh token for the same intent is granted after the first was used', () => {
    const rt = runtime();
    const d = digestsOf(rt);
    expect(decide(rt, [mint({ ...d, reasonCode: 'one' })])['verdict']).toBe('allow');
    expect(decide(rt, [mint({ ...d, reasonCode: 'two' })])['verdict']).toBe('allow');
  });

  it('approvalTokenReuse ttl (opt-in) keeps the reference behaviour: reusable until expiry, no ledger', () => {
    const rt = runtime({ approvalTokenReuse: 'ttl' });
    const token = mint({ ...digestsOf(rt) });
    expect(decide(rt, [token])['verdict']).toBe('allow');
    expect(decide(rt, [token])['verdict']).toBe('allow');
    expect(existsSync(join(rt.traceDir, '..', 'token_ledger'))).toBe(false);
  });

  it('tokenLedgerDir puts the ledger elsewhere; a simulate run consumes nothing', () => {
    const ledgerDir = mkdtempSync(join(tmpdir(), 'ward-ledger-dir-'));
    const rt = runtime({ tokenLedgerDir: ledgerDir });
    const token = mint({ ...digestsOf(rt) });
    const simulated = decide(rt, [token], { simulate: true });
    expect(simulated['reason_codes']).toContain('approval_granted');
    expect(readdirSync(ledgerDir)).toHaveLength(0);
    expect(decide(rt, [token])['verdict']).toBe('allow');
    expect(readdirSync(ledgerDir)).toHaveLength(1);
    expect(decide(rt, [token])['verdict']).toBe('require_approval');
  });

  it('a token that does not grant (too few approvals) is not consumed', () => {
    const rt = runtime();
    const d = digestsOf(rt, 'tool.deploy');
    const alice = mint({ ...d, scope: ['tool:tool.deploy'], approver: 'alice' });
    expect(decide(rt, [alice], { tool: 'tool.deploy' })['verdict']).toBe('require_approval');
    expect(existsSync(join(rt.traceDir, '..', 'token_ledger'))).toBe(false);
    // With a second approver holding a second key the pair grants once, and both are consumed.
    const bobKey = generateSigningKey();
    const bob = mint({ ...d, scope: ['tool:tool.deploy'], approver: 'bob', key: bobKey });
    const granted = decide(rt, [alice, bob], { keys: [bobKey], tool: 'tool.deploy' });
    expect(granted['verdict']).toBe('allow');
    expect(readdirSync(join(rt.traceDir, '..', 'token_ledger'))).toHaveLength(2);
    const again = decide(rt, [alice, bob], { keys: [bobKey], tool: 'tool.deploy' });
    expect(again['verdict']).toBe('require_approval');
  });

  it('ALICE and alice, or one key for two names, do not make two approvers in the gate', () => {
    const rt = runtime();
    const d = digestsOf(rt, 'tool.deploy');
    const k2 = generateSigningKey();
    const upper = decide(rt, [mint({ ...d, scope: ['tool:tool.deploy'] }), mint({ ...d, scope: ['tool:tool.deploy'], approver: 'ALICE', key: k2 })], { keys: [k2], tool: 'tool.deploy' });
    expect(upper['verdict']).toBe('require_approval');
    expect(upper['reason_codes']).toContain('approval_distinct_approvers_required');
    const oneKey = decide(rt, [mint({ ...d, scope: ['tool:tool.deploy'] }), mint({ ...d, scope: ['tool:tool.deploy'], approver: 'bob' })], { tool: 'tool.deploy' });
    expect(oneKey['verdict']).toBe('require_approval');
    expect(oneKey['reason_codes']).toContain('approval_distinct_approvers_required');
  });

  it('losing a race re-evaluates: a token consumed meanwhile by another process is refused', () => {
    const rt = runtime();
    const token = mint({ ...digestsOf(rt) });
    const ledger = new FileTokenLedger(join(rt.traceDir, '..', 'token_ledger'));
    // Another process consumes the token between this process's check and its consume.
    let raced = false;
    const racing = {
      isConsumed: (kind: 'approval', id: string) => ledger.isConsumed(kind, id),
      consume: (kind: 'approval', ids: readonly string[], record: Parameters<FileTokenLedger['consume']>[2]) => {
        if (!raced) {
          raced = true;
          expect(ledger.consume(kind, ids, record)).toEqual({ ok: true });
        }
        return ledger.consume(kind, ids, record);
      },
    };
    const step = approvalStep({ tokens: () => tokens(token), verifyKeys: [key] });
    const trace = decideGate(rt, { intent: INTENT(), steps: gateEvalSteps(rt, { approvals: (t) => step({ ...t, approvalLedger: racing }) }) }).trace;
    expect(trace['verdict']).toBe('require_approval');
    expect(trace['reason_codes']).toContain('approval_token_consumed');
  });
});
