// Golden outputs of the SDK's `Ward.evaluate` (see golden.ts for what is pinned, masked and how to regenerate).
import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { intent, Ward } from '../../src/index.js';
import { auditFile, auditPathsIn, awayFromHourBoundary, expectGolden, golden, Masker, REPO, runWard, traceFile, workDir, guardInputs } from './golden.js';

guardInputs();

const POLICY = golden('inputs/policy.yaml');
const intentOf = (name: string) => JSON.parse(readFileSync(golden(`inputs/${name}.json`), 'utf8')) as Record<string, unknown>;
const TIME = '2026-03-12T12:00:00Z';

let dir: string;
let key: string;
let ward: Ward;
beforeEach(() => {
  ({ dir, key } = workDir('sdk'));
  ward = new Ward({ policy: POLICY, stateDir: join(dir, '.ward'), signingKey: key, cwd: dir });
});

function masker(): Masker {
  // The approve command names the OS user as the default approver.
  return new Masker()
    .substitute(dir, '<WORK>')
    .substitute(REPO.replace(/\/$/, ''), '<REPO>')
    .substitute(`--approver ${userInfo().username} `, '--approver <USER> ');
}

type EvalOptions = Parameters<Ward['evaluate']>[1];

/** Pin the decision `evaluate` resolves with (functions are not data and drop out) and its trace, or the error it rejects with. */
async function pin(name: string, intent: unknown, options: EvalOptions = {}, m = masker()): Promise<Record<string, unknown>> {
  const opts = { evaluationTime: TIME, ...options };
  let record: Record<string, unknown>;
  let decision: Record<string, unknown> = {};
  try {
    decision = (await ward.evaluate(intent as Record<string, never>, opts)) as unknown as Record<string, unknown>;
    const audits = auditPathsIn(decision['output']).map(auditFile);
    record = { options: opts, decision, traces: [traceFile(String(decision['tracePath']))], ...(audits.length ? { audits } : {}) };
  } catch (err) {
    const e = err as Error & Record<string, unknown>;
    record = { options: opts, error: { name: e.name, message: e.message, ...Object.fromEntries(Object.entries(e).filter(([k]) => k !== 'stack')) } };
  }
  expectGolden(`sdk/${name}`, record, m);
  return decision;
}

describe('golden: SDK Ward.evaluate', () => {
  it('allow', async () => {
    expect((await pin('allow', intentOf('read')))['verdict']).toBe('allow');
  });

  it('block by rule, with a correlation id', async () => {
    expect((await pin('block-rule', intentOf('delete'), { correlationId: 'golden-correlation-1' }))['verdict']).toBe('block');
  });

  it('require_approval without a token (with the approval request), then allow with a valid token', async () => {
    const d = await pin('approval-missing', intentOf('write'));
    expect(d['verdict']).toBe('require_approval');
    const tokenPath = join(dir, 'approval-token.json');
    const minted = runWard(
      [
        'approve', '--intent-digest', String(d['intentDigest']), '--policy-digest', String(d['policyDigest']), '--scope', 'tool:tool.write',
        '--ttl', '1h', '--approver', 'golden-approver', '--reason-code', 'golden-change', '--key-mode', 'prod', '--private-key', key, '--out', tokenPath, '--json',
      ],
      { cwd: dir },
    );
    expect(minted.code, minted.stderr).toBe(0);
    const tokenId = String((JSON.parse(readFileSync(tokenPath, 'utf8')) as Record<string, unknown>)['token_id']);
    const granted = await pin('approval-granted', intentOf('write'), { approvalTokens: [tokenPath] }, masker().substitute(tokenId, '<APPROVAL_TOKEN_ID>'));
    expect(granted['verdict']).toBe('allow');
  });

  it('delegation required, token missing', async () => {
    expect((await pin('delegation-missing', intentOf('deploy')))['verdict']).toBe('block');
  });

  it('rate limit: first call allowed, second exceeded', async () => {
    await awayFromHourBoundary();
    expect((await pin('rate-limit-first', intentOf('search')))['verdict']).toBe('allow');
    expect((await pin('rate-limit-exceeded', intentOf('search')))['verdict']).toBe('block');
  });

  it('unevaluable intent in a fail-closed risk class blocks, traced', async () => {
    expect((await pin('unevaluable', intentOf('unevaluable')))['verdict']).toBe('block');
  });

  it('script intent', async () => {
    expect((await pin('script', intentOf('script')))['verdict']).toBe('require_approval');
  });

  it('simulate', async () => {
    expect((await pin('simulate', intentOf('delete'), { simulate: true }))['verdict']).toBe('allow');
  });

  it('durability fsync (the journal path)', async () => {
    expect((await pin('durability-fsync', intentOf('read'), { durability: 'fsync' }))['verdict']).toBe('allow');
    await ward.close();
  });

  it('intent JSON text with a duplicate key is refused', async () => {
    await pin('intent-duplicate-key', '{"tool_name":"tool.read","tool_name":"tool.write"}');
  });

  it('intent without context.identity is refused', async () => {
    await pin('intent-invalid', { tool_name: 'tool.read' });
  });

  it('approval through the approval directory: the printed command writes the token, the identical call is then allowed', async () => {
    const first = await pin('approval-dir-missing', intentOf('write'));
    const approval = first['approval'] as { command: string; tokenPath: string };
    // Run the printed approve command's flags (it is `node <ward> approve …`), with a fixed approver.
    const args = approval.command.split(' ').slice(2).map((a, i, all) => (all[i - 1] === '--approver' ? 'golden-approver' : a));
    const r = runWard(args, { cwd: dir });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const tokenId = String((JSON.parse(readFileSync(approval.tokenPath, 'utf8')) as Record<string, unknown>)['token_id']);
    const second = await pin('approval-dir-granted', intentOf('write'), {}, masker().substitute(tokenId, '<APPROVAL_TOKEN_ID>'));
    expect(second['verdict']).toBe('allow');
  });

  it('guardTool: a blocked call throws WardBlockedError and the tool never runs', async () => {
    let ran = false;
    const guarded = ward.guardTool(
      (path: string) => {
        ran = true;
        return path;
      },
      (path: string) => ({ ...intentOf('delete'), args: { path }, targets: [{ kind: 'path', value: path, operation: 'delete' }] }),
    );
    let error: Record<string, unknown> = {};
    try {
      await guarded('/golden/ws/notes.txt');
    } catch (err) {
      const e = err as Error & Record<string, unknown>;
      error = { name: e.name, message: e.message, ...Object.fromEntries(Object.entries(e).filter(([k]) => k !== 'stack')) };
    }
    expect(ran).toBe(false);
    expectGolden('sdk/guard-tool-blocked', { error, traces: [traceFile(String(error['tracePath']))] }, masker());
  });

  it('the intent builder', async () => {
    const built = intent
      .tool('tool.read')
      .args({ path: '/golden/ws/notes.txt' })
      .target({ kind: 'path', value: '/golden/ws/notes.txt', operation: 'read' })
      .context({ identity: 'agent.worker', workspace: '/golden/ws', risk_class: 'medium', session_id: 'sess-golden' })
      .createdAt('2026-03-12T11:00:00Z') // the builder's default is the wall clock
      .build();
    expect((await pin('intent-builder', built))['verdict']).toBe('allow');
  });
});
