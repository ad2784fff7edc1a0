import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { Ward, WardBlockedError, intent, mintApprovalToken, nowUTC, parseGoDuration, type ApprovalRequest } from '../../src/index.js';
import { defaultKeyPaths, readPrivateKeyFile } from '../../src/keys/index.js';
import { APPROVAL_POLICY, bareDir } from '../cli/run.js';

function writeIntent(path = '/workspace/config.yaml') {
  return intent
    .tool('fs.write_file')
    .args({ path, content: 'replicas: 3' })
    .target({ kind: 'path', value: path, operation: 'write' })
    .context({ identity: 'agent.sdk', workspace: '/workspace', risk_class: 'low' })
    .build();
}

/** A project with `.ward/` and a policy file, as after `ward init`. */
function project(): { dir: string; policy: string } {
  const dir = bareDir('ward-sdk-approve-');
  mkdirSync(join(dir, '.ward'));
  const policy = join(dir, 'policy.yaml');
  writeFileSync(policy, APPROVAL_POLICY);
  return { dir, policy };
}

/** A person pastes the printed command into a shell in some other directory. */
function paste(command: string) {
  const r = spawnSync('sh', ['-c', command], { cwd: bareDir(), encoding: 'utf8', env: { ...process.env, WARD_STATE_DIR: '' } });
  expect(r.status, r.stderr).toBe(0);
}

/** Mint a token with the project's default key, as `ward approve` would. */
function mint(ward: Ward, request: Pick<ApprovalRequest, 'intentDigest' | 'policyDigest' | 'scope'>) {
  return mintApprovalToken({
    intentDigest: request.intentDigest,
    policyDigest: request.policyDigest,
    ttlNs: parseGoDuration('1h'),
    scope: request.scope,
    approver: 'alice',
    reasonCode: 'test',
    now: nowUTC(),
    producerVersion: 'test',
    key: readPrivateKeyFile(defaultKeyPaths(ward.stateDir).privateKey),
  });
}

describe('SDK approvals, end to end', () => {
  it('the printed command approves the call, not the run: the same call with a new run id runs once (issue 32)', async () => {
    const { dir, policy } = project();
    const ward = new Ward({ policy, cwd: dir });
    const inRun = (run: string) => intent.tool('fs.write_file').args({ path: '/workspace/c.yaml', content: 'x' }).target({ kind: 'path', value: '/workspace/c.yaml', operation: 'write' }).context({ identity: 'agent.sdk', workspace: '/workspace', risk_class: 'low', run_id: run, session_id: run }).build();
    const first = await ward.evaluate(inRun('run-1'));
    expect(first.verdict).toBe('require_approval');
    expect(first.approval!.command).toMatch(/--call-digest [0-9a-f]{64}/);
    paste(first.approval!.command);
    const next = await ward.evaluate(inRun('run-2'));
    expect(next.intentDigest).not.toBe(first.intentDigest);
    expect(next.verdict).toBe('allow');
    expect(next.reasonCodes).toContain('approval_granted');
    expect((await ward.evaluate(inRun('run-3'))).verdict).toBe('require_approval'); // one use
  });

  it('require_approval → the printed command, run verbatim elsewhere → the retried guarded call runs', async () => {
    const { dir, policy } = project();
    const ward = new Ward({ policy, cwd: join(dir) });
    expect(ward.state).toMatchObject({ dir: join(dir, '.ward'), source: 'found' });
    const write = vi.fn(async (path: string) => `wrote ${path}`);
    const guarded = ward.guardTool(write, (path: string) => writeIntent(path));

    const err = await guarded('/workspace/config.yaml').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WardBlockedError);
    const blocked = err as WardBlockedError;
    expect(blocked.verdict).toBe('require_approval');
    expect(write).not.toHaveBeenCalled();
    const approval = blocked.approval!;
    expect(approval.scope).toEqual(['tool:fs.write_file']);
    expect(approval.approvalDir).toBe(join(dir, '.ward', 'approvals'));
    expect(approval.tokenPath).toBe(join(dir, '.ward', 'approvals', `approval_${blocked.intentDigest.slice(0, 16)}.json`));
    expect(approval.command).toContain(`--state-dir ${join(dir, '.ward')} `);
    expect(blocked.hint).toContain(approval.command);

    paste(approval.command);
    await expect(approval.waitForToken({ timeoutMs: 5000 })).resolves.toMatchObject({ path: approval.tokenPath });
    await expect(guarded('/workspace/config.yaml')).resolves.toBe('wrote /workspace/config.yaml');
    expect(write).toHaveBeenCalledTimes(1);

    // One use: the token in the approval directory is spent; the next identical call needs approval again.
    const next = (await guarded('/workspace/config.yaml').catch((e: unknown) => e)) as WardBlockedError;
    expect(next.verdict).toBe('require_approval');
    expect(next.reasonCodes).toContain('approval_token_consumed');
    expect(write).toHaveBeenCalledTimes(1);
    // …and waiting for a token does not return the spent one.
    await expect(next.approval!.waitForToken({ timeoutMs: 100, pollMs: 20 })).rejects.toThrow(/no approval token for intent/);
    await ward.close();
  });

  it('evaluate({ approvalTokens }) takes token objects and token files, checked by the gate', async () => {
    const { dir, policy } = project();
    const ward = new Ward({ policy, cwd: dir, approvalDir: false });
    const first = await ward.evaluate(writeIntent());
    expect(first.verdict).toBe('require_approval');
    expect(first.approval?.approvalDir).toBeUndefined();
    await expect(first.approval!.waitForToken()).rejects.toThrow(/approvalDir: false/);

    const requested = await ward.requestApproval(writeIntent());
    expect(requested).toMatchObject({ intentDigest: first.intentDigest, policyDigest: first.policyDigest, scope: ['tool:fs.write_file'] });
    const read = intent.tool('fs.read_file').args({ path: '/a' }).target({ kind: 'path', value: '/a', operation: 'read' })
      .context({ identity: 'agent.sdk', workspace: '/workspace', risk_class: 'low' }).build();
    expect(await ward.requestApproval(read)).toBeUndefined(); // blocked by default: no approval helps

    const byObject = await ward.evaluate(writeIntent(), { approvalTokens: [mint(ward, first.approval!)] });
    expect(byObject).toMatchObject({ verdict: 'allow', allowed: true });
    expect(byObject.reasonCodes).toContain('approval_granted');

    const file = join(dir, 'token.json');
    writeFileSync(file, JSON.stringify(mint(ward, first.approval!)));
    const byFile = await ward.evaluate(writeIntent(), { approvalTokens: ['token.json'] });
    expect(byFile.verdict).toBe('allow');
    const reused = await ward.evaluate(writeIntent(), { approvalTokens: ['token.json'] });
    expect(reused.verdict).toBe('require_approval');
    expect(reused.reasonCodes).toContain('approval_token_consumed');

    // A token for another intent, or signed with another key, is refused by the gate's checks.
    const other = await ward.evaluate(writeIntent('/workspace/other.yaml'), { approvalTokens: [mint(ward, first.approval!)] });
    expect(other.verdict).toBe('require_approval');
    expect(other.reasonCodes).toContain('approval_token_intent_mismatch');
    const stranger = new Ward({ policy, stateDir: join(bareDir(), '.ward') });
    await stranger.evaluate(writeIntent());
    const foreign = mint(stranger, first.approval!);
    const wrongKey = await ward.evaluate(writeIntent(), { approvalTokens: [foreign] });
    expect(wrongKey.verdict).toBe('require_approval');
    expect(wrongKey.reasonCodes).toContain('approval_token_signature_invalid');
    await ward.close();
    await stranger.close();
  });

  it('guardTool({ onApprovalRequired }) asks, waits for the token and runs the call once it is allowed', async () => {
    const { dir, policy } = project();
    const ward = new Ward({ policy, cwd: dir });
    const write = vi.fn(async (path: string) => `wrote ${path}`);
    const asked: ApprovalRequest[] = [];
    const guarded = ward.guardTool(write, (path: string) => writeIntent(path), {
      onApprovalRequired: async (request, [path]) => {
        expect(path).toBe('/workspace/config.yaml');
        asked.push(request);
        setTimeout(() => paste(request.command), 50); // a person, a little later
        await request.waitForToken({ timeoutMs: 10_000, pollMs: 25 });
        return true;
      },
    });
    await expect(guarded('/workspace/config.yaml')).resolves.toBe('wrote /workspace/config.yaml');
    expect(asked).toHaveLength(1);
    expect(existsSync(asked[0]!.tokenPath)).toBe(true);

    // Returning tokens presents them; returning false refuses the call.
    const withToken = ward.guardTool(write, (path: string) => writeIntent(path), {
      onApprovalRequired: (request) => mint(ward, request),
    });
    await expect(withToken('/workspace/b.yaml')).resolves.toBe('wrote /workspace/b.yaml');
    const refused = ward.guardTool(write, (path: string) => writeIntent(path), { onApprovalRequired: () => false });
    const err = (await refused('/workspace/c.yaml').catch((e: unknown) => e)) as WardBlockedError;
    expect(err.verdict).toBe('require_approval');
    expect(write).toHaveBeenCalledTimes(2);

    // Both grants are in the shared ledger (one use across every process on this state).
    const ledger = join(dir, '.ward', 'token_ledger');
    expect(readdirSync(ledger).filter((n) => n.startsWith('approval_'))).toHaveLength(2);
    expect(readFileSync(join(ledger, readdirSync(ledger)[0]!), 'utf8')).toContain('intent_digest');
    await ward.close();
  });
});
