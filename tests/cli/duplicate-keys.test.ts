import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { fixture, REPO, tempDir, ward } from './run.js';

/**
 * The CLI's JSON inputs refuse a key repeated in one object (exit 6, the key and its object named),
 * and `gate eval` refuses a context envelope dated in the future.
 */
const POLICY = join(REPO, 'policies', 'baseline-highrisk.yaml');
const READ = readFileSync(join(REPO, 'examples', 'quickstart', 'read-report.json'), 'utf8');
const V7 = readFileSync(fixture('envelopes/v7-envelope.json'), 'utf8');

let dir: string;
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
beforeAll(() => {
  dir = tempDir('ward-dup-');
});

describe('ward gate eval', () => {
  it('an intent with two targets: exit 6, no decision, no trace', () => {
    // The second, harmless list would win under JSON.parse; the first names the real target.
    const intent = file('two-targets.json', READ.replace('"targets":', '"targets": [{ "kind": "path", "value": "/etc/shadow", "operation": "read" }],\n  "targets":'));
    const cwd = tempDir('ward-dup-cwd-');
    const r = ward(['gate', 'eval', '--policy', POLICY, '--intent', intent], { cwd });
    expect(r.code).toBe(6);
    expect(r.stdout).toBe('');
    expect(existsSync(join(cwd, '.ward', 'traces')) ? readdirSync(join(cwd, '.ward', 'traces')) : []).toEqual([]);
    expect(r.stderr).toBe(
      'error: parse intent json: duplicate key "targets" at $\nhint: a key may appear only once in each JSON object: remove the repeated "targets"\n',
    );
  });

  it('--json names the key and the member path', () => {
    const intent = file('two-risk-classes.json', READ.replace('"risk_class": "high"', '"risk_class": "high", "risk_class": "low"'));
    const r = ward(['gate', 'eval', '--policy', POLICY, '--intent', intent, '--json'], { cwd: dir });
    expect(r.code).toBe(6);
    expect(JSON.parse(r.stdout)).toMatchObject({
      ok: false,
      error: 'parse intent json: duplicate key "risk_class" at $.context',
      error_code: 'invalid_input',
      duplicate_key: 'risk_class',
      duplicate_key_path: '$.context.risk_class',
    });
  });

  it('a context envelope with a repeated key: exit 6', () => {
    const envelope = file('dup-envelope.json', V7.replace('"ref_id": "ctx-a"', '"ref_id": "ctx-a", "ref_id": "ctx-z"'));
    const r = ward(['gate', 'eval', '--policy', POLICY, '--intent', join(REPO, 'examples/quickstart/read-report.json'), '--context-envelope', envelope], { cwd: dir });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('error: parse context envelope: duplicate key "ref_id" at $.records[1]\n');
  });

  it('with --daemon the intent is refused before anything is sent', () => {
    const intent = file('two-tools.json', READ.replace('"tool_name":', '"tool_name": "fs.delete",\n  "tool_name":'));
    // Nothing listens on port 9: the refusal must come before any connection.
    const r = ward(['gate', 'eval', '--daemon', 'http://127.0.0.1:9', '--intent', intent], { cwd: dir });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('parse intent json: duplicate key "tool_name" at $');
  });

  it('an envelope retrieved more than five minutes after the evaluation time is refused', () => {
    const low = file('low-risk.json', READ.replace('"risk_class": "high"', '"risk_class": "low"'));
    const args = ['gate', 'eval', '--policy', POLICY, '--context-envelope', fixture('envelopes/v7-envelope.json')];
    const refused = ward([...args, '--intent', low, '--evaluation-time', '2026-03-12T11:54:54Z', '--json'], { cwd: dir });
    expect(refused.code).toBe(6);
    expect(JSON.parse(refused.stdout)).toMatchObject({
      ok: false,
      error:
        'context envelope retrieved_at is in the future: record "ctx-a" retrieved_at 2026-03-12T11:59:55Z is after the evaluation time 2026-03-12T11:54:54Z by more than the allowed clock skew (300s)',
      envelope_problem: 'retrieved_at_in_future',
      ref_id: 'ctx-a',
      retrieved_at: '2026-03-12T11:59:55Z',
      evaluation_time: '2026-03-12T11:54:54Z',
      clock_skew_seconds: 300,
    });
    // Exactly five minutes ahead is within the skew.
    expect(ward([...args, '--intent', low, '--evaluation-time', '2026-03-12T11:54:55Z'], { cwd: dir }).code).toBe(0);
    // Under the baseline's fail-closed risk classes it is a block with a trace instead.
    const high = ward([...args, '--intent', join(REPO, 'examples/quickstart/read-report.json'), '--evaluation-time', '2026-03-12T11:00:00Z', '--json'], { cwd: dir });
    expect(high.code).toBe(3);
    expect(JSON.parse(high.stdout)).toMatchObject({ verdict: 'block', reason_codes: ['fail_closed_intent_invalid'] });
  });
});

describe('the other JSON inputs', () => {
  it('ward digest, policy test and mcp proxy --call (arguments given as JSON text too)', () => {
    const dupDigest = ward(['digest', file('dup.json', '{"a": 1, "b": {"c": 1, "c": 2}}')], { cwd: dir });
    expect(dupDigest.code).toBe(6);
    expect(dupDigest.stderr).toContain('duplicate key "c" at $.b');

    const intent = file('policy-test.json', READ.replace('"args":', '"args": {},\n  "args":'));
    const policyTest = ward(['policy', 'test', POLICY, intent], { cwd: dir });
    expect(policyTest.code).toBe(6);
    expect(policyTest.stderr).toContain('parse intent json: duplicate key "args" at $');

    const openai = file('openai.json', '{"id": "call_1", "type": "function", "function": {"name": "lookup_weather", "arguments": "{\\"city\\":\\"Paris\\",\\"city\\":\\"Rome\\"}"}}');
    const proxied = ward(['mcp', 'proxy', '--policy', POLICY, '--adapter', 'openai', '--call', openai, '--json'], { cwd: dir });
    expect(proxied.code).toBe(6);
    expect(proxied.stdout + proxied.stderr).toContain('duplicate key \\"city\\" at $');

    const payload = file('call-dup.json', '{"name": "read_file", "name": "delete_file", "arguments": {"path": "/tmp/x"}}');
    const proxiedPayload = ward(['mcp', 'proxy', '--policy', POLICY, '--call', payload], { cwd: dir });
    expect(proxiedPayload.code).toBe(6);
    expect(proxiedPayload.stderr).toContain('parse call payload json: duplicate key "name" at $');
  });

  it('the Claude Code hook denies an event with a repeated key (fail closed)', () => {
    const event = '{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/tmp/a"},"tool_name":"Bash"}';
    const r = ward(['hook', 'claude-code', '--policy', POLICY], { cwd: dir, input: event });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string } };
    expect(out.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(out.hookSpecificOutput.permissionDecisionReason).toContain('duplicate key "tool_name" at $');
  });

  it('policies are YAML and already refuse repeated keys, in block and flow style', () => {
    const block = ward(['policy', 'validate', file('p1.yaml', 'default_verdict: allow\ndefault_verdict: block\n')], { cwd: dir });
    expect(block.code).toBe(6);
    expect(block.stderr).toContain('mapping key "default_verdict" already defined');
    const flow = ward(['policy', 'validate', file('p2.yaml', '{"default_verdict": "allow", "rules": [{"name": "a", "effect": "block", "effect": "allow", "match": {"tool_names": ["x"]}}]}\n')], { cwd: dir });
    expect(flow.code).toBe(6);
    expect(flow.stderr).toContain('mapping key "effect" already defined');
  });
});
