import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addSeconds, nowUTC, parseRFC3339, type JsonObject } from '../../src/canon/index.js';
import { PgTokenLedger } from '../../src/cluster/ledger.js';
import { PgLimitCounter } from '../../src/cluster/limits.js';
import { decideGate, decideGateAsync, type GateRuntime } from '../../src/decision/gate-run.js';
import { gateEvalSteps } from '../../src/decision/steps.js';
import { approvalStep } from '../../src/decision/token-steps.js';
import { generateSigningKey, type SigningKey } from '../../src/keys/index.js';
import { migrate, PgPool } from '../../src/pg/index.js';
import { parsePolicyYaml } from '../../src/policy/load.js';
import type { RateLimitConfig } from '../../src/policy/types.js';
import { consumeRateLimit, rateLimitBucket } from '../../src/state/rate-limit.js';
import { mintApprovalToken, type ParsedToken } from '../../src/tokens/index.js';
import { pathIntent } from '../decision/helpers.js';
import { startPostgres, type PgServer } from '../support/postgres.js';

/*
 * The cluster's shared decision state at library level: two pools on one database stand for two
 * replicas, and many consumers race on each. Real replicas: shared-state-replicas.test.ts.
 */

let server: PgServer;
const pools: PgPool[] = [];

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);

afterAll(async () => {
  await server?.destroy();
});

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

/** A fresh migrated database and two pools on it ("replica A" and "replica B"). */
async function twoReplicas(): Promise<[PgPool, PgPool]> {
  const url = await server.createDatabase();
  const a = new PgPool({ connectionString: url, display: 'replica A' }, { max: 4 });
  const b = new PgPool({ connectionString: url, display: 'replica B' }, { max: 4 });
  pools.push(a, b);
  await Promise.all([migrate(a), migrate(b)]);
  return [a, b];
}

const limit = { requests: 7, window: 'minute' as const, scope: 'tool_identity' as const };
const subject = { toolName: 'tool.write', identity: 'alice' };
const at = parseRFC3339('2026-03-12T12:00:30Z');

describe('PgLimitCounter (rate limits and destructive budgets across replicas)', () => {
  it('admits exactly `requests` of 60 concurrent calls on two replicas: no lost update, refused calls not counted', async () => {
    const [a, b] = await twoReplicas();
    const counters = [new PgLimitCounter(a), new PgLimitCounter(b)];
    const uses = await Promise.all(Array.from({ length: 60 }, (_, i) => counters[i % 2]!.consume(limit, subject, at)));
    const admitted = uses.filter((u) => !u.exceeded);
    expect(admitted).toHaveLength(7);
    // Each admitted call saw a distinct count: 1..7, each once (a lost update would repeat one).
    expect(admitted.map((u) => u.used).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    for (const u of uses.filter((x) => x.exceeded)) expect(u).toMatchObject({ used: 7, remaining: 0 });
    const rows = await a.query<{ key: string; count: string }>('SELECT key, count FROM ward_limit_counters');
    expect(rows.rows).toEqual([{ key: rateLimitBucket(limit, subject, at).key, count: '7' }]);
  });

  it('reports exactly what the file counter reports, call for call (keys, buckets, scopes, refusals)', async () => {
    const [a] = await twoReplicas();
    const pg = new PgLimitCounter(a);
    const file = join(mkdtempSync(join(tmpdir(), 'ward-rl-')), 'state.json');
    const two: RateLimitConfig = { requests: 2, window: 'minute', scope: 'tool_identity' };
    const calls: [RateLimitConfig, typeof subject, typeof at][] = [
      [two, subject, at],
      [two, subject, at],
      [two, subject, at], // refused
      [two, subject, parseRFC3339('2026-03-12T12:01:00Z')], // next minute: a new bucket
      [two, { ...subject, identity: 'bob' }, at],
      [{ ...two, window: 'hour', scope: 'tool' }, subject, at],
      [{ ...two, scope: 'identity' }, subject, at],
    ];
    for (const [l, s, t] of calls) expect(await pg.consume(l, s, t)).toEqual(consumeRateLimit(file, l, s, t));
  });

  it('prunes buckets that can no longer be hit', async () => {
    const [a] = await twoReplicas();
    const counter = new PgLimitCounter(a);
    await counter.consume(limit, subject, parseRFC3339('2026-03-12T08:00:00Z'));
    await counter.consume(limit, subject, at);
    expect(await counter.prune(at.sec - 7200)).toBe(1);
    const rows = await a.query<{ key: string }>('SELECT key FROM ward_limit_counters');
    expect(rows.rows.map((r) => r.key)).toEqual([rateLimitBucket(limit, subject, at).key]);
    // On its own, off the decision path: buckets two hours older than the call's clock.
    const auto = new PgLimitCounter(a, { pruneEveryMs: 0 });
    await auto.consume(limit, subject, parseRFC3339('2026-03-12T09:00:00Z'));
    await auto.settled();
    await auto.consume(limit, subject, parseRFC3339('2026-03-12T12:30:00Z'));
    await auto.settled();
    const left = await a.query<{ key: string }>('SELECT key FROM ward_limit_counters ORDER BY key');
    expect(left.rows.map((r) => r.key)).toEqual([rateLimitBucket(limit, subject, at).key, rateLimitBucket(limit, subject, parseRFC3339('2026-03-12T12:30:00Z')).key].sort());
  });
});

const record = (expiresInSec = 3600) => ({
  intentDigest: 'a'.repeat(64),
  policyDigest: 'b'.repeat(64),
  expiresAt: addSeconds(nowUTC(), expiresInSec),
  consumedAt: nowUTC(),
});

describe('PgTokenLedger (one-use tokens across replicas)', () => {
  it('of 40 concurrent consumers on two replicas, exactly one consumes a token', async () => {
    const [a, b] = await twoReplicas();
    const ledgers = [new PgTokenLedger(a), new PgTokenLedger(b)];
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => ledgers[i % 2]!.consume('approval', ['same-token'], record())));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok && r.conflicts.join() === 'same-token')).toHaveLength(39);
    expect(await ledgers[1]!.consumedAmong('approval', ['same-token', 'other'])).toEqual(['same-token']);
  });

  it('is all or nothing with several tokens: a call that loses one consumes none', async () => {
    const [a, b] = await twoReplicas();
    const [la, lb] = [new PgTokenLedger(a), new PgTokenLedger(b)];
    expect(await la.consume('approval', ['b'], record())).toEqual({ ok: true });
    expect(await lb.consume('approval', ['a', 'b', 'c'], record())).toEqual({ ok: false, conflicts: ['b'] });
    expect(await la.consumedAmong('approval', ['a', 'b', 'c'])).toEqual(['b']);
    // A token id listed twice is one token; ids are arbitrary text.
    expect(await lb.consume('approval', ['a', 'a', '../x\u00e9'], record())).toEqual({ ok: true });
    expect(await la.consumedAmong('approval', ['a', '../x\u00e9', 'c'])).toEqual(['a', '../x\u00e9']);
  });

  it('overlapping sets raced on two replicas: every token is consumed at most once, and a winner holds all of its set', async () => {
    const [a, b] = await twoReplicas();
    const ledgers = [new PgTokenLedger(a), new PgTokenLedger(b)];
    const sets = Array.from({ length: 30 }, (_, i) => [`t${i % 6}`, `t${(i * 5 + 1) % 6}`, `t${(i + 3) % 6}`]);
    const results = await Promise.all(sets.map((ids, i) => ledgers[i % 2]!.consume('approval', ids, record())));
    const won = sets.filter((_, i) => results[i]!.ok).flatMap((ids) => [...new Set(ids)]);
    expect(new Set(won).size).toBe(won.length); // no token granted twice
    const rows = await a.query<{ token_id: string }>('SELECT token_id FROM ward_token_ledger ORDER BY token_id');
    expect(rows.rows.map((r) => r.token_id)).toEqual([...won].sort()); // nothing consumed by a loser
    for (const [i, r] of results.entries()) if (!r.ok) expect(r.conflicts.length).toBeGreaterThan(0), expect(sets[i]).toEqual(expect.arrayContaining(r.conflicts));
  });

  it('prune removes only rows of tokens that expired before the cutoff', async () => {
    const [a] = await twoReplicas();
    const ledger = new PgTokenLedger(a);
    await ledger.consume('approval', ['old'], record(-3 * 86400));
    await ledger.consume('approval', ['live'], record(3600));
    expect(await ledger.prune(addSeconds(nowUTC(), -86400))).toBe(1);
    expect(await ledger.consumedAmong('approval', ['old', 'live'])).toEqual(['live']);
  });

  it('each replica prunes by itself, off the decision path, expired rows an hour past their expiry', async () => {
    const [a] = await twoReplicas();
    const ledger = new PgTokenLedger(a, { pruneEveryMs: 0 });
    await ledger.consume('approval', ['old'], record(-2 * 3600));
    await ledger.consume('approval', ['recent'], record(-60)); // expired a minute ago: kept (clock margin)
    await ledger.settled();
    await ledger.consume('approval', ['next'], record());
    await ledger.settled();
    expect(await ledger.consumedAmong('approval', ['old', 'recent', 'next'])).toEqual(['recent', 'next']);
  });
});

describe('commits of the shared state', () => {
  it('skip the WAL flush for their own transaction only: the connection (and the next trace commit on it) stays synchronous', async () => {
    const url = await server.createDatabase();
    const db = new PgPool({ connectionString: url, display: 'one connection' }, { max: 1 });
    pools.push(db);
    await migrate(db);
    await db.query("SET synchronous_commit = 'on'"); // the test server's default is off; production's is on
    await new PgLimitCounter(db).consume(limit, subject, at);
    await new PgTokenLedger(db).consume('approval', ['t1'], record());
    await new PgTokenLedger(db).consume('approval', ['t2', 't3'], record());
    expect((await db.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]!.synchronous_commit).toBe('on');
  });
});

describe('shared state when PostgreSQL cannot be reached', () => {
  it('a consume fails with ERR_STORE_UNAVAILABLE: no count, no grant, no decision', async () => {
    const db = new PgPool({ connectionString: 'postgres://nobody@127.0.0.1:1/none', display: 'unreachable' }, { acquireTimeoutMs: 1000 });
    pools.push(db);
    await expect(new PgLimitCounter(db).consume(limit, subject, at)).rejects.toMatchObject({ code: 'ERR_STORE_UNAVAILABLE' });
    await expect(new PgTokenLedger(db).consume('approval', ['t'], record())).rejects.toMatchObject({ code: 'ERR_STORE_UNAVAILABLE' });
    await expect(new PgTokenLedger(db).consumedAmong('approval', ['t'])).rejects.toMatchObject({ code: 'ERR_STORE_UNAVAILABLE' });
  });
});

describe('decisions over the shared state (decideGateAsync)', () => {
  const key = generateSigningKey();
  /** Two approvers need two keys (distinct approvers are paired with distinct keys). */
  const approverKeys: Record<string, SigningKey> = { alice: generateSigningKey(), bob: generateSigningKey(), carol: generateSigningKey() };
  const policyYaml = `schema_id: gait.gate.policy
schema_version: 1.0.0
default_verdict: block
rules:
  - name: limited-reads
    priority: 10
    effect: allow
    match: { tool_names: [tool.read] }
    rate_limit: { requests: 3, window: minute, scope: tool_identity }
  - name: approve-writes
    priority: 20
    effect: require_approval
    min_approvals: 2
    match: { tool_names: [tool.write] }
`;
  const writeIntent = pathIntent('tool.write', '/repo/x.txt', 'write', 'agent');
  const readIntent = pathIntent('tool.read', '/repo/x.txt', 'read', 'agent');

  function runtime(db: PgPool | undefined, extra: Partial<GateRuntime> = {}): GateRuntime {
    const state = mkdtempSync(join(tmpdir(), 'ward-shared-'));
    return {
      policy: parsePolicyYaml(policyYaml),
      signingKey: key,
      traceFormat: 'ward',
      traceDir: join(state, 'traces'),
      rateLimitStatePath: join(state, 'rate.json'),
      profile: 'standard',
      ...(db ? { sharedState: { limits: new PgLimitCounter(db), tokens: new PgTokenLedger(db) } } : {}),
      ...extra,
    };
  }

  const digests = (rt: GateRuntime) => {
    const trace = decideGate({ ...rt, sharedState: undefined }, { intent: writeIntent }).trace;
    return { intentDigest: String(trace['intent_digest']), policyDigest: String(trace['policy_digest']) };
  };
  const token = (rt: GateRuntime, approver: string): ParsedToken => ({
    source: `${approver}.json`,
    value: mintApprovalToken({
      ...digests(rt),
      ttlNs: 3_600_000_000_000n,
      scope: ['tool:tool.write'],
      approver,
      reasonCode: 'change_42',
      now: nowUTC(),
      producerVersion: 'test',
      key: approverKeys[approver]!,
    }),
  });
  const decideWith = async (rt: GateRuntime, tokens: ParsedToken[], options: { simulate?: boolean } = {}) => {
    const steps = gateEvalSteps(rt, { approvals: approvalStep({ tokens: () => tokens, verifyKeys: Object.values(approverKeys) }) }, options);
    const pending = rt.sharedState ? await decideGateAsync(rt, { intent: writeIntent, steps }) : decideGate(rt, { intent: writeIntent, steps });
    const out = pending.finish('-').output as JsonObject & { verdict: string; reason_codes: string[] };
    return { verdict: out.verdict, reasons: out.reason_codes, approvalRef: out['approval_ref'] };
  };

  it('tokens used on replica A are refused on replica B with approval_token_consumed; ttl reuse is allowed', async () => {
    const [a, b] = await twoReplicas();
    const [ra, rb] = [runtime(a), runtime(b)];
    const tokens = [token(ra, 'alice'), token(ra, 'bob')];
    expect((await decideWith(ra, tokens)).verdict).toBe('allow');
    const again = await decideWith(rb, tokens);
    expect(again.verdict).toBe('require_approval');
    expect(again.reasons).toContain('approval_token_consumed');
    // Gait's semantics where asked for: no ledger, reusable until expiry.
    const ttl = runtime(b, { approvalTokenReuse: 'ttl' });
    expect((await decideWith(ttl, tokens)).verdict).toBe('allow');
    expect((await decideWith(ttl, tokens)).verdict).toBe('allow');
  });

  it('answers exactly as the file ledger does: refusals and dry runs name a used token too', async () => {
    const [a] = await twoReplicas();
    const shared = runtime(a);
    const files = runtime(undefined);
    const [alice, bob, carol] = [token(shared, 'alice'), token(shared, 'bob'), token(shared, 'carol')];
    for (const rt of [shared, files]) expect((await decideWith(rt, [alice, bob])).verdict).toBe('allow');
    const cases: [ParsedToken[], { simulate?: boolean }][] = [
      [[alice], {}], // one used token, two required: refused, and named consumed
      [[alice, carol], {}], // used + fresh: not enough
      [[alice, bob], { simulate: true }], // dry run: nothing consumed, still named consumed
      [[carol], { simulate: true }],
    ];
    for (const [tokens, options] of cases) expect(await decideWith(shared, tokens, options)).toEqual(await decideWith(files, tokens, options));
    const used = await decideWith(shared, [alice], {});
    expect(used.reasons).toContain('approval_token_consumed');
    // carol was never consumed (the refusal and the dry runs consume nothing).
    expect(await new PgTokenLedger(a).consumedAmong('approval', [String((carol as { value: JsonObject }).value['token_id'])])).toEqual([]);
  });

  it('a rate limit of 3 admits exactly 3 of 20 concurrent decisions on two replicas', async () => {
    const [a, b] = await twoReplicas();
    const rts = [runtime(a), runtime(b)];
    const verdicts = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const rt = rts[i % 2]!;
        const pending = await decideGateAsync(rt, { intent: readIntent, steps: gateEvalSteps(rt, {}) });
        return pending.finish('-').output as { verdict: string; reason_codes: string[] };
      }),
    );
    expect(verdicts.filter((v) => v.verdict === 'allow')).toHaveLength(3);
    for (const v of verdicts.filter((x) => x.verdict !== 'allow')) expect(v.reason_codes).toContain('rate_limit_exceeded');
  });

  it('an unreachable database fails the decision (the daemon answers 503), it never decides without its count', async () => {
    const db = new PgPool({ connectionString: 'postgres://nobody@127.0.0.1:1/none', display: 'unreachable' }, { acquireTimeoutMs: 1000 });
    pools.push(db);
    const rt = runtime(db);
    await expect(decideGateAsync(rt, { intent: readIntent, steps: gateEvalSteps(rt, {}) })).rejects.toMatchObject({ code: 'ERR_STORE_UNAVAILABLE' });
  });

  it('a synchronous decision refuses a runtime whose state is shared (fails, never decides)', async () => {
    const [a] = await twoReplicas();
    const rt = runtime(a);
    expect(() => decideGate(rt, { intent: readIntent, steps: gateEvalSteps(rt, {}) })).toThrow(/decideAsync/);
  });
});
