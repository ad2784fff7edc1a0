import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { nowUTC, type JsonObject } from '../../src/canon/index.js';
import { parsePrivateKey } from '../../src/keys/index.js';
import { mintApprovalToken } from '../../src/tokens/index.js';
import { tempDir } from '../cli/run.js';
import { pathIntent } from '../decision/helpers.js';
import { call, clusterFixture, startReplicas, writeSharedKey, type Replica } from './replicas.js';

/*
 * Two real `ward serve` replicas (child processes) on one PostgreSQL: the rate limit holds exactly
 * across them, and an approval token used on one is refused on the other, unless the replicas run
 * with Gait's TTL-only reuse. Library-level races: shared-state.test.ts.
 */

const POLICY = `schema_id: gait.gate.policy
schema_version: 1.0.0
default_verdict: block
rules:
  - name: limited-reads
    priority: 10
    effect: allow
    match: { tool_names: [tool.read] }
    rate_limit: { requests: 5, window: minute, scope: tool_identity }
  - name: approve-writes
    priority: 20
    effect: require_approval
    match: { tool_names: [tool.write] }
`;

const cluster = clusterFixture();
let policy: string;
let keyFile: string;

beforeAll(() => {
  const dir = tempDir('ward-shared-replicas-');
  policy = join(dir, 'policy.yaml');
  writeFileSync(policy, POLICY);
  keyFile = writeSharedKey(dir);
});

/** Two replicas on a fresh database, signing (and verifying approval tokens) with one shared key. */
async function twoReplicas(args: string[] = []): Promise<Replica[]> {
  cluster.replicas = await startReplicas(2, { storeUrl: await cluster.server.createDatabase(), policy, sharedKey: keyFile, args });
  return cluster.replicas;
}

const evalOn = async (r: Replica, body: JsonObject) => {
  const reply = await call(r.url, '/v1/gate/eval', { body });
  expect(reply.status, reply.text).toBe(200);
  return reply.json as JsonObject & { verdict: string; reason_codes: string[] };
};

describe('decision state shared by two ward serve replicas', () => {
  it('a rate limit of 5 per minute admits exactly 5 of 20 concurrent requests spread over both replicas', async () => {
    const [a, b] = await twoReplicas();
    const intent = pathIntent('tool.read', '/repo/report.txt', 'read', 'agent.reader');
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => evalOn(i % 2 ? b! : a!, { intent })));
    // Counted per minute bucket: a run that straddles a minute boundary has two buckets.
    const byBucket = new Map<string, typeof replies>();
    for (const r of replies) byBucket.set(String(r['rate_limit_key']), [...(byBucket.get(String(r['rate_limit_key'])) ?? []), r]);
    for (const [, inBucket] of byBucket) expect(inBucket.filter((r) => r.verdict === 'allow')).toHaveLength(Math.min(5, inBucket.length));
    if (byBucket.size === 1) expect(replies.filter((r) => r.verdict === 'allow')).toHaveLength(5);
    for (const r of replies.filter((x) => x.verdict !== 'allow')) expect(r.reason_codes).toContain('rate_limit_exceeded');
    // Each replica got 10 requests: counters of its own would have admitted 5 on each, 10 in all.
  }, 60_000);

  it('an approval token used on replica 1 is refused on replica 2 with approval_token_consumed', async () => {
    const [a, b] = await twoReplicas();
    const { token, intent } = await approvalFor(a!);
    const first = await evalOn(a!, { intent, approval_tokens: [token] });
    expect(first.verdict).toBe('allow');
    const second = await evalOn(b!, { intent, approval_tokens: [token] });
    expect(second.verdict).toBe('require_approval');
    expect(second.reason_codes).toContain('approval_token_consumed');
    const third = await evalOn(a!, { intent, approval_tokens: [token] });
    expect(third.reason_codes).toContain('approval_token_consumed');
  }, 60_000);

  it('with --approval-token-reuse ttl the same token is allowed on both replicas (Gait semantics)', async () => {
    const [a, b] = await twoReplicas(['--approval-token-reuse', 'ttl']);
    const { token, intent } = await approvalFor(a!);
    expect((await evalOn(a!, { intent, approval_tokens: [token] })).verdict).toBe('allow');
    expect((await evalOn(b!, { intent, approval_tokens: [token] })).verdict).toBe('allow');
    expect((await evalOn(b!, { intent, approval_tokens: [token] })).verdict).toBe('allow');
  }, 60_000);
});

/** A write that needs approval, and a token for it signed with the replicas' shared key. */
async function approvalFor(r: Replica): Promise<{ token: JsonObject; intent: JsonObject }> {
  const intent = pathIntent('tool.write', '/repo/config.yaml', 'write', 'agent.writer');
  const asked = await evalOn(r, { intent });
  expect(asked.verdict).toBe('require_approval');
  const token = mintApprovalToken({
    intentDigest: String(asked['intent_digest']),
    policyDigest: String(asked['policy_digest']),
    ttlNs: 3_600_000_000_000n,
    scope: ['tool:tool.write'],
    approver: 'alice',
    reasonCode: 'change_42',
    now: nowUTC(),
    producerVersion: 'test',
    key: parsePrivateKey(readFileSync(keyFile, 'utf8')),
  });
  return { token, intent };
}
