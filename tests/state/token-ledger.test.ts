import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { addSeconds, nowUTC } from '../../src/canon/gotime.js';
import { generateSigningKey } from '../../src/keys/index.js';
import { parsePolicyYaml } from '../../src/policy/load.js';
import { decideGate } from '../../src/decision/gate-run.js';
import { FileTokenLedger } from '../../src/state/token-ledger.js';
import { mintApprovalToken } from '../../src/tokens/approval.js';
import { distModule, runConcurrently } from '../trace/spawn.js';
import { pathIntent } from '../decision/helpers.js';

const record = (expiresInSec = 3600) => ({
  intentDigest: 'a'.repeat(64),
  policyDigest: 'b'.repeat(64),
  expiresAt: addSeconds(nowUTC(), expiresInSec),
  consumedAt: nowUTC(),
});

const tempDir = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));

describe('FileTokenLedger', () => {
  it('consumes a token once; a second consume reports the conflict', () => {
    const ledger = new FileTokenLedger(join(tempDir('ward-ledger-'), 'ledger'));
    expect(ledger.isConsumed('approval', 'tok1')).toBe(false);
    expect(ledger.consume('approval', ['tok1'], record())).toEqual({ ok: true });
    expect(ledger.isConsumed('approval', 'tok1')).toBe(true);
    expect(ledger.consume('approval', ['tok1'], record())).toEqual({ ok: false, conflicts: ['tok1'] });
  });

  it('writes one 0600 entry per token under a hashed name, so a token id is never a path', () => {
    const dir = join(tempDir('ward-ledger-'), 'ledger');
    const ledger = new FileTokenLedger(dir);
    expect(ledger.consume('approval', ['../../etc/passwd', 'x\u0000y'], record())).toEqual({ ok: true });
    const names = readdirSync(dir).sort();
    expect(names).toHaveLength(2);
    for (const name of names) {
      expect(name).toMatch(/^approval_[0-9a-f]{64}\.json$/);
      expect(statSync(join(dir, name)).mode & 0o777).toBe(0o600);
    }
    const ids = names.map((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')).token_id).sort();
    expect(ids).toEqual(['../../etc/passwd', 'x\u0000y'].sort());
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it('is all or nothing: when one of several tokens is taken, the others are released', () => {
    const dir = join(tempDir('ward-ledger-'), 'ledger');
    const ledger = new FileTokenLedger(dir);
    expect(ledger.consume('approval', ['b'], record())).toEqual({ ok: true });
    expect(ledger.consume('approval', ['a', 'b', 'c'], record())).toEqual({ ok: false, conflicts: ['b'] });
    expect(ledger.isConsumed('approval', 'a')).toBe(false);
    expect(ledger.isConsumed('approval', 'c')).toBe(false);
    expect(readdirSync(dir)).toHaveLength(1);
    // A token id listed twice is one token.
    expect(ledger.consume('approval', ['a', 'a'], record())).toEqual({ ok: true });
  });

  it('a ledger that cannot be written refuses loudly (no silent grant) and releases what it took', () => {
    const root = tempDir('ward-ledger-');
    writeFileSync(join(root, 'ledger'), 'a file, not a directory');
    const broken = new FileTokenLedger(join(root, 'ledger'));
    expect(() => broken.consume('approval', ['t'], record())).toThrow(/token ledger .*cannot record approval token t as used/);
    expect(broken.isConsumed('approval', 't')).toBe(false);
  });

  it('prune removes only entries of tokens that expired before the cutoff', () => {
    const dir = join(tempDir('ward-ledger-'), 'ledger');
    const ledger = new FileTokenLedger(dir);
    ledger.consume('approval', ['old'], record(-3 * 86400));
    ledger.consume('approval', ['live'], record(3600));
    writeFileSync(join(dir, 'approval_garbage.json'), 'not json');
    expect(ledger.prune(addSeconds(nowUTC(), -86400))).toBe(1);
    expect(ledger.isConsumed('approval', 'old')).toBe(false);
    expect(ledger.isConsumed('approval', 'live')).toBe(true);
    expect(readdirSync(dir)).toContain('approval_garbage.json');
    expect(new FileTokenLedger(join(dir, 'missing')).prune(nowUTC())).toBe(0);
  });
});

describe('FileTokenLedger under 50 concurrent processes', () => {
  // Each process consumes the token all of them race for, then a token of its own: one batch of
  // 50 processes covers both races (starting a process is most of this file's time).
  const CHILD = `
    const { FileTokenLedger } = await import(${JSON.stringify(distModule('state/token-ledger.js'))});
    const { nowUTC } = await import(${JSON.stringify(distModule('canon/gotime.js'))});
    const [dir, ...ids] = process.argv.slice(-3);
    const ledger = new FileTokenLedger(dir);
    const r = ids.map((id) => ledger.consume('approval', [id], { intentDigest: 'a', policyDigest: 'b', consumedAt: nowUTC() }));
    process.stdout.write(JSON.stringify(r));
  `;

  describe('50 processes consume the same token, then one distinct token each', () => {
    let dir: string;
    let results: { ok: boolean; conflicts?: string[] }[][];
    beforeAll(async () => {
      dir = join(tempDir('ward-ledger-race-'), 'ledger');
      const outs = await runConcurrently(CHILD, Array.from({ length: 50 }, (_, i) => [dir, 'same-token', `token-${i}`]));
      results = outs.map((o) => JSON.parse(o) as { ok: boolean; conflicts?: string[] }[]);
    }, 120_000);

    it('exactly one of 50 processes consumes the same token', () => {
      const same = results.map((r) => r[0]!);
      expect(same.filter((r) => r.ok)).toHaveLength(1);
      expect(same.filter((r) => !r.ok && r.conflicts?.[0] === 'same-token')).toHaveLength(49);
    });

    it('50 processes consuming 50 distinct tokens all succeed', () => {
      expect(results.map((r) => r[1])).toEqual(Array.from({ length: 50 }, () => ({ ok: true })));
      // One entry per token, no temporary files left behind.
      expect(readdirSync(dir).sort()).toHaveLength(51);
      const ledger = new FileTokenLedger(dir);
      for (const id of ['same-token', ...Array.from({ length: 50 }, (_, i) => `token-${i}`)]) expect(ledger.isConsumed('approval', id)).toBe(true);
    });
  });

  it('through the gate: 50 processes present one approval token, exactly one decision is allowed', async () => {
    const state = tempDir('ward-ledger-gate-');
    const policyYaml = 'default_verdict: require_approval\n';
    const intent = pathIntent('tool.write', '/tmp/x.txt', 'write', 'agent');
    const key = generateSigningKey();
    const rt = {
      policy: parsePolicyYaml(policyYaml),
      signingKey: key,
      traceFormat: 'ward' as const,
      traceDir: join(state, 'traces'),
      rateLimitStatePath: join(state, 'rate.json'),
      profile: 'standard' as const,
    };
    const first = decideGate(rt, { intent }).trace;
    const token = mintApprovalToken({
      intentDigest: String(first['intent_digest']),
      policyDigest: String(first['policy_digest']),
      ttlNs: 3_600_000_000_000n,
      scope: ['tool:tool.write'],
      approver: 'alice',
      reasonCode: 'race',
      now: nowUTC(),
      producerVersion: 'test',
      key,
    });
    writeFileSync(join(state, 'policy.yaml'), policyYaml);
    writeFileSync(join(state, 'intent.json'), JSON.stringify(intent));
    writeFileSync(join(state, 'token.json'), JSON.stringify(token));
    writeFileSync(join(state, 'key.pem'), key.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string, { mode: 0o600 });
    const child = `
      const { readFileSync } = await import('node:fs');
      const { join } = await import('node:path');
      const { parsePolicyYaml } = await import(${JSON.stringify(distModule('policy/load.js'))});
      const { parsePrivateKey } = await import(${JSON.stringify(distModule('keys/index.js'))});
      const { runGate } = await import(${JSON.stringify(distModule('decision/gate-run.js'))});
      const { approvalStep } = await import(${JSON.stringify(distModule('decision/token-steps.js'))});
      const { gateEvalSteps } = await import(${JSON.stringify(distModule('decision/steps.js'))});
      const state = process.argv[process.argv.length - 1];
      const key = parsePrivateKey(readFileSync(join(state, 'key.pem'), 'utf8'));
      const rt = { policy: parsePolicyYaml(readFileSync(join(state, 'policy.yaml'), 'utf8')), signingKey: key, traceFormat: 'ward',
        traceDir: join(state, 'traces'), rateLimitStatePath: join(state, 'rate.json'), profile: 'standard' };
      const token = { source: 'token.json', value: JSON.parse(readFileSync(join(state, 'token.json'), 'utf8')) };
      const r = runGate(rt, { intent: JSON.parse(readFileSync(join(state, 'intent.json'), 'utf8')),
        steps: gateEvalSteps(rt, { approvals: approvalStep({ tokens: () => [token], verifyKeys: [key] }) }) });
      process.stdout.write(JSON.stringify({ verdict: r.output.verdict, reasons: r.output.reason_codes }));
    `;
    const outs = await runConcurrently(child, Array.from({ length: 50 }, () => [state]));
    const results = outs.map((o) => JSON.parse(o) as { verdict: string; reasons: string[] });
    const allowed = results.filter((r) => r.verdict === 'allow');
    expect(allowed).toHaveLength(1);
    expect(allowed[0]!.reasons).toContain('approval_granted');
    const refused = results.filter((r) => r.verdict === 'require_approval');
    expect(refused).toHaveLength(49);
    for (const r of refused) expect(r.reasons).toContain('approval_token_consumed');
    expect(readdirSync(join(state, 'token_ledger'))).toHaveLength(1);
    // Every decision left its trace (the first, token-less one was never written: decideGate only).
    expect(readdirSync(join(state, 'traces')).filter((n) => n.startsWith('trace_'))).toHaveLength(50);
  }, 180_000);
});
