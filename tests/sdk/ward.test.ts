import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import {
  ERROR_CODES,
  EXIT,
  Ward,
  WardBlockedError,
  WardError,
  evaluate,
  guardTool,
  intent,
  isWardBlockedError,
  loadKeyRing,
  nowUTC,
  parsePolicyYaml,
  verifyTraceFile,
} from '../../src/index.js';
import { parseDecisionCapture } from '../../src/trace/capture.js';
import { readPrivateKeyFile } from '../../src/keys/index.js';
import { REPO, tempDir, v7PrivateKeyFile } from '../cli/run.js';

const HIGH_RISK = join(REPO, 'policies', 'baseline-highrisk.yaml');
const quickstart = (name: string) => JSON.parse(readFileSync(join(REPO, 'examples', 'quickstart', `${name}.json`), 'utf8'));

const SMALL_POLICY = `schema_id: gait.gate.policy
schema_version: 1.0.0
default_verdict: block
rules:
  - name: allow-reads
    priority: 10
    effect: allow
    match:
      endpoint_classes: [fs.read]
  - name: approve-writes
    priority: 20
    effect: require_approval
    match:
      endpoint_classes: [fs.write]
  - name: plan-only-deploys
    priority: 30
    effect: dry_run
    match:
      tool_names: [deploy.run]
`;

const ctx = { identity: 'agent.test', workspace: '/workspace', risk_class: 'low' };

function readIntent(path = '/workspace/a.txt') {
  return intent.tool('fs.read_file').args({ path }).target({ kind: 'path', value: path, operation: 'read' }).context(ctx).build();
}

function writeIntent(path = '/workspace/a.txt') {
  return intent({
    tool_name: 'fs.write_file',
    args: { path, content: 'x' },
    targets: [{ kind: 'path', value: path, operation: 'write' }],
    context: ctx,
  });
}

describe('Ward.evaluate', () => {
  it('decides the shipped quickstart intents and writes a verifiable signed trace for each', async () => {
    const stateDir = tempDir('ward-sdk-');
    const ward = new Ward({ policy: HIGH_RISK, stateDir });
    const cases: [string, string, number][] = [
      ['read-report', 'allow', EXIT.OK],
      ['delete-database', 'block', EXIT.BLOCKED],
      ['write-config', 'require_approval', EXIT.APPROVAL_REQUIRED],
    ];
    const keys = loadKeyRing(stateDir);
    for (const [name, verdict, exitCode] of cases) {
      const d = await ward.evaluate(quickstart(name));
      expect(d.verdict, name).toBe(verdict);
      expect(d.allowed).toBe(verdict === 'allow');
      expect(d.exitCode).toBe(exitCode);
      expect(d.traceId).toMatch(/^[0-9a-f]+$/);
      expect(d.tracePath.startsWith(join(stateDir, 'traces'))).toBe(true);
      expect(d.intentDigest).toMatch(/^[0-9a-f]{64}$/);
      expect(d.policyDigest).toBe(ward.policy.digest);
      expect(d.output['trace_id']).toBe(d.traceId);
      const v = verifyTraceFile(d.tracePath, keys.length ? keys : loadKeyRing(stateDir));
      expect(v.ok).toBe(true);
      expect(v.verdict).toBe(verdict);
    }
    const blocked = await ward.evaluate(quickstart('delete-database'));
    expect(blocked.reasonCodes).toContain('destructive_apply_requires_approval');
    expect(blocked.matchedRule).toBe('block-destructive-tools');
    expect(blocked.toolName).toBe('fs.delete_file');
  });

  it('gives the same verdict, digests and reason codes as the pure evaluate()', async () => {
    const ward = new Ward({ policy: HIGH_RISK, stateDir: tempDir() });
    const pure = evaluate(parsePolicyYaml(readFileSync(HIGH_RISK, 'utf8')), quickstart('delete-database'), { now: nowUTC() });
    const d = await ward.evaluate(quickstart('delete-database'));
    expect(d.verdict).toBe(pure.verdict);
    expect(d.reasonCodes).toEqual(pure.reasonCodes);
  });

  it('accepts policy YAML text, a loaded policy, or a path relative to cwd', async () => {
    const dir = tempDir();
    const fromText = new Ward({ policy: SMALL_POLICY, stateDir: dir });
    const fromLoaded = new Ward({ policy: parsePolicyYaml(SMALL_POLICY), stateDir: dir });
    const fromPath = new Ward({ policy: 'policies/baseline-lowrisk.yaml', cwd: REPO, stateDir: dir });
    expect(fromText.policy.digest).toBe(fromLoaded.policy.digest);
    expect(fromPath.policy.digest).not.toBe(fromText.policy.digest);
    expect((await fromText.evaluate(readIntent())).verdict).toBe('allow');
  });

  it('reports a missing policy file as a WardError that names the fix', () => {
    try {
      new Ward({ policy: 'no-such-policy.yaml', cwd: tempDir() });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(WardError);
      expect((err as WardError).code).toBe(ERROR_CODES.IO);
      expect((err as WardError).exitCode).toBe(EXIT.INVALID_INPUT);
      expect((err as WardError).hint).toContain('ward init');
    }
  });

  it('reports an invalid policy with the policy error code', () => {
    expect(() => new Ward({ policy: 'default_verdict: maybe\n', stateDir: tempDir() })).toThrow(
      expect.objectContaining({ code: ERROR_CODES.POLICY_INVALID }),
    );
  });

  it('signs with an explicit key file and honours traceDir and traceOut', async () => {
    const keyPath = v7PrivateKeyFile();
    const key = readPrivateKeyFile(keyPath);
    const traceDir = join(tempDir(), 'my-traces');
    const ward = new Ward({ policy: SMALL_POLICY, stateDir: tempDir(), signingKey: keyPath, traceDir });
    const d = await ward.evaluate(readIntent());
    expect(d.tracePath.startsWith(traceDir)).toBe(true);
    expect(verifyTraceFile(d.tracePath, [key]).key_id).toBe(key.keyId);
    const out = join(tempDir(), 'one.json');
    const d2 = await ward.evaluate(readIntent(), { traceOut: out });
    expect(d2.tracePath).toBe(out);
    expect(existsSync(out)).toBe(true);
    // A SigningKey object works too.
    const ward2 = new Ward({ policy: SMALL_POLICY, stateDir: tempDir(), signingKey: key });
    expect(verifyTraceFile((await ward2.evaluate(readIntent())).tracePath, [key]).ok).toBe(true);
  });

  it('simulate reports what would have happened and allows', async () => {
    const ward = new Ward({ policy: SMALL_POLICY, stateDir: tempDir() });
    const d = await ward.evaluate(writeIntent(), { simulate: true, evaluationTime: '2026-03-01T00:00:00Z' });
    expect(d.verdict).toBe('allow');
    expect(d.reasonCodes).toContain('simulated_require_approval');
    expect(d.output['would_have_blocked']).toBe(true);
  });

  it('captureIntents writes a decision capture beside each trace, and nothing otherwise', async () => {
    const ward = new Ward({ policy: SMALL_POLICY, stateDir: tempDir(), captureIntents: true });
    const d = await ward.evaluate(writeIntent('/workspace/c.txt'), { evaluationTime: '2026-03-01T00:00:00Z' });
    expect(d.capturePath).toBeDefined();
    const capture = parseDecisionCapture(readFileSync(d.capturePath!));
    expect(capture.trace_id).toBe(d.traceId);
    expect(capture.verdict).toBe('require_approval');
    expect((capture.intent as { tool_name: string }).tool_name).toBe('fs.write_file');
    const quiet = new Ward({ policy: SMALL_POLICY, stateDir: tempDir() });
    const q = await quiet.evaluate(readIntent());
    expect(q.capturePath).toBeUndefined();
    expect(readdirSync(quiet.traceDir).filter((f) => f.startsWith('capture_'))).toEqual([]);
  });

  it('concurrent decisions each get their own durable, verifiable trace', async () => {
    const stateDir = tempDir();
    const ward = new Ward({ policy: SMALL_POLICY, stateDir });
    const decisions = await Promise.all(Array.from({ length: 20 }, (_, i) => ward.evaluate(readIntent(`/workspace/f${i}.txt`))));
    await ward.close();
    expect(new Set(decisions.map((d) => d.tracePath)).size).toBe(20);
    const keys = loadKeyRing(stateDir);
    for (const d of decisions) expect(verifyTraceFile(d.tracePath, keys).ok).toBe(true);
  });

  it('binds a context envelope given as JSON text or object', async () => {
    const policy = readFileSync(join(REPO, 'examples', 'policies', 'context-required.yaml'), 'utf8');
    const ward = new Ward({ policy, stateDir: tempDir() });
    const envelopeText = readFileSync(join(REPO, 'fixtures', 'envelopes', 'v7-envelope.json'), 'utf8');
    const req = JSON.parse(readFileSync(join(REPO, 'examples', 'intents', 'write-with-context.json'), 'utf8'));
    const at = '2026-03-12T12:00:00Z';
    expect((await ward.evaluate(req, { evaluationTime: at })).verdict).toBe('block');
    expect((await ward.evaluate(req, { evaluationTime: at, contextEnvelope: envelopeText })).verdict).toBe('allow');
    const fromObject = await ward.evaluate(req, { evaluationTime: at, contextEnvelope: JSON.parse(envelopeText) });
    expect(fromObject.verdict).toBe('allow');
    expect(fromObject.output['context_source']).toBe('context_envelope');
    await expect(ward.evaluate(req, { contextEnvelope: '{"records": [' })).rejects.toMatchObject({ code: ERROR_CODES.ENVELOPE_INVALID });
  });
});

describe('guardTool', () => {
  it('runs the tool on allow and returns its result', async () => {
    const ward = new Ward({ policy: SMALL_POLICY, stateDir: tempDir() });
    const read = vi.fn(async (path: string) => `contents of ${path}`);
    const guarded = ward.guardTool(read, (path) => readIntent(path));
    await expect(guarded('/workspace/a.txt')).resolves.toBe('contents of /workspace/a.txt');
    expect(read).toHaveBeenCalledTimes(1);
  });

  it('blocks: throws WardBlockedError with reason codes and trace id; the tool never runs', async () => {
    const ward = new Ward({ policy: SMALL_POLICY, stateDir: tempDir() });
    const del = vi.fn(async (_path: string) => 'deleted');
    const guarded = guardTool(ward, del, (path: string) =>
      intent.tool('fs.delete_file').args({ path }).target({ kind: 'path', value: path, operation: 'delete' }).context(ctx).build(),
    );
    const err = await guarded('/workspace/db').catch((e: unknown) => e);
    expect(del).not.toHaveBeenCalled();
    expect(isWardBlockedError(err)).toBe(true);
    const blocked = err as WardBlockedError;
    expect(blocked).toBeInstanceOf(WardError);
    expect(blocked.code).toBe('ERR_TOOL_BLOCKED');
    expect(blocked.verdict).toBe('block');
    expect(blocked.reasonCodes).toContain('default_block');
    expect(blocked.exitCode).toBe(EXIT.BLOCKED);
    expect(blocked.traceId).toMatch(/^[0-9a-f]+$/);
    expect(blocked.intentDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(existsSync(blocked.tracePath)).toBe(true);
    expect(blocked.message).toContain('fs.delete_file');
    // The hint explains the codes itself: a consumer project has none of Ward's docs.
    expect(blocked.hint).toContain('default_block: no rule matched; the policy default is block');
    expect(blocked.hint).not.toContain('docs/');
  });

  it('require_approval and dry_run do not run the tool either', async () => {
    const ward = new Ward({ policy: SMALL_POLICY, stateDir: tempDir() });
    const write = vi.fn(async () => 'written');
    const approval = await ward.guardTool(write, () => writeIntent())().catch((e: unknown) => e);
    expect((approval as WardBlockedError).verdict).toBe('require_approval');
    expect((approval as WardBlockedError).exitCode).toBe(EXIT.APPROVAL_REQUIRED);
    expect((approval as WardBlockedError).hint).toContain(' approve --intent-digest ');
    const deploy = vi.fn(async () => 'deployed');
    const dry = await ward
      .guardTool(deploy, () => intent({ tool_name: 'deploy.run', context: ctx }))()
      .catch((e: unknown) => e);
    expect((dry as WardBlockedError).verdict).toBe('dry_run');
    expect(write).not.toHaveBeenCalled();
    expect(deploy).not.toHaveBeenCalled();
  });

  it('fails closed: an intent the gate cannot evaluate throws WardError and the tool does not run', async () => {
    const ward = new Ward({ policy: SMALL_POLICY, stateDir: tempDir() });
    const tool = vi.fn(async () => 'ran');
    const guarded = ward.guardTool(tool, () => ({ tool_name: 'x', targets: [{ kind: 'spaceship', value: 'y' }], context: ctx }));
    const err = await guarded().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WardError);
    expect(isWardBlockedError(err)).toBe(false);
    expect(tool).not.toHaveBeenCalled();
  });

  it('passes the arguments through unchanged and supports async describeIntent', async () => {
    const ward = new Ward({ policy: SMALL_POLICY, stateDir: tempDir() });
    const tool = vi.fn(async (a: string, b: number) => `${a}:${b}`);
    const guarded = ward.guardTool(tool, async (a) => readIntent(`/workspace/${a}`));
    await expect(guarded('f', 2)).resolves.toBe('f:2');
    expect(tool).toHaveBeenCalledWith('f', 2);
  });
});

describe('intent builders', () => {
  it('the fluent and plain forms build the same request', () => {
    const a = intent
      .tool('fs.write')
      .args({ path: '/tmp/x' })
      .target({ kind: 'path', value: '/tmp/x', operation: 'write' })
      .provenance('$.path', 'user')
      .context({ identity: 'me', workspace: '/tmp', risk_class: 'high' })
      .createdAt('2026-01-01T00:00:00Z')
      .build();
    const b = intent({
      tool_name: 'fs.write',
      args: { path: '/tmp/x' },
      targets: [{ kind: 'path', value: '/tmp/x', operation: 'write' }],
      arg_provenance: [{ arg_path: '$.path', source: 'user' }],
      context: { identity: 'me', workspace: '/tmp', risk_class: 'high' },
      created_at: '2026-01-01T00:00:00Z',
    });
    expect(a).toEqual(b);
    expect(a.schema_id).toBe('gait.gate.intent_request');
    expect(a.schema_version).toBe('1.0.0');
    expect(a.producer_version).toMatch(/^ward-sdk\//);
  });

  it('refuses an intent without identity, workspace and risk_class, naming the fix', () => {
    try {
      intent.tool('fs.read').build();
      expect.unreachable();
    } catch (err) {
      expect((err as WardError).code).toBe(ERROR_CODES.INTENT_INVALID);
      expect((err as WardError).message).toContain('identity, workspace, risk_class');
      expect((err as WardError).hint).toContain('.context(');
    }
  });

  it('refuses what the gate would refuse: raw credential material in args', () => {
    expect(() => intent({ tool_name: 'http.get', args: { api_key: 'sk-abcdef1234567890' }, context: ctx })).toThrow(
      expect.objectContaining({ code: ERROR_CODES.INTENT_INVALID }),
    );
  });

  it('passes other contract fields through with .with()', () => {
    const r = intent
      .tool('skill.run')
      .context(ctx)
      .with('skill_provenance', { skill_name: 's', source: 'registry', publisher: 'acme' })
      .build();
    expect(r['skill_provenance']).toEqual({ skill_name: 's', source: 'registry', publisher: 'acme' });
  });
});
