import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRunpack } from '../../src/runpack/index.js';
import { packVerified, verifyPack } from '../../src/pack/index.js';
import { loadOrCreateDefaultKey } from '../../src/keys/index.js';
import { tempDir, v7PrivateKeyFile } from '../cli/run.js';
import { callJson, compat, inProcess, POLICY } from './helpers.js';
import { runMcpCall } from '../../src/cli/commands/mcp-call.js';
import { normalizeRunId, traceTimestamp } from '../../src/decision-service/evaluate.js';

function writeCall(dir: string, call: unknown, name = 'call.json'): string {
  const path = join(dir, name);
  writeFileSync(path, typeof call === 'string' ? call : JSON.stringify(call));
  return path;
}

const READ_CALL = { name: 'read_file', args: { path: '/w/a' }, context: { identity: 'a', workspace: '/w', session_id: 's', risk_class: 'low' } };

describe('mcp proxy --call: errors and exit codes', () => {
  it('missing --call and --policy are usage errors (exit 6)', async () => {
    const a = await callJson({});
    expect(a.code).toBe(6);
    expect(a.json['error']).toBe('missing required --call');
    const b = await callJson({ call: compat('call-openai.json'), policy: '' });
    expect(b.code).toBe(6);
    expect(b.json['error']).toBe('missing required --policy');
  });

  it('an unknown adapter, unparsable JSON and an undecodable payload exit 6 with ok:false', async () => {
    const dir = tempDir();
    const bad = await callJson({ call: compat('call-openai.json'), adapter: 'gemini' });
    expect([bad.code, bad.json['ok'], bad.json['error']]).toEqual([6, false, 'unsupported adapter: gemini']);
    const garbage = await callJson({ call: writeCall(dir, '{not json') }, { cwd: dir });
    expect(garbage.code).toBe(6);
    expect(String(garbage.json['error'])).toMatch(/^parse call payload json: /);
    const decode = await callJson({ call: writeCall(dir, { args: {} }) }, { cwd: dir });
    expect([decode.code, decode.json['error']]).toEqual([6, 'decode mcp payload: name is required']);
    expect(decode.json['error_code']).toBe('invalid_input');
    expect(existsSync(join(dir, '.ward', 'traces'))).toBe(false);
  });

  it('reads the payload from stdin with --call -', async () => {
    const r = await callJson({ call: '-' }, { stdin: JSON.stringify(READ_CALL) });
    expect([r.code, r.json['verdict']]).toEqual([0, 'allow']);
  });

  it('refuses call.context.context_envelope_path at the proxy boundary', async () => {
    const dir = tempDir();
    const r = await callJson({ call: writeCall(dir, { ...READ_CALL, context: { ...READ_CALL.context, context_envelope_path: 'env.json' } }) }, { cwd: dir });
    expect(r.code).toBe(6);
    expect(r.json['error']).toBe('call.context.context_envelope_path is not supported; use --context-envelope at the boundary');
  });

  it('oss-prod: needs --key-mode prod, refuses default allow, requires identity, workspace and session', async () => {
    const dir = tempDir();
    const call = writeCall(dir, READ_CALL);
    const noProd = await callJson({ call, profile: 'oss-prod' }, { cwd: dir });
    expect([noProd.code, noProd.json['error']]).toEqual([6, 'oss-prod profile requires --key-mode prod']);
    const key = v7PrivateKeyFile();
    const allow = await callJson({ call, profile: 'oss-prod', keyMode: 'prod', privateKey: key, policy: join(process.cwd(), 'fixtures/policies/default-allow.yaml') }, { cwd: dir });
    expect([allow.code, allow.json['error']]).toEqual([6, 'oss-prod profile rejects policy default_verdict=allow']);
    const missing = await callJson({ call: writeCall(dir, { name: 'read_file' }, 'bare.json'), profile: 'oss-prod', keyMode: 'prod', privateKey: key }, { cwd: dir });
    expect(missing.code).toBe(6);
    expect(missing.json['error']).toBe('oss-prod profile requires call.context.identity, call.context.workspace and call.context.session_id');
    const ok = await callJson({ call, profile: 'oss-prod', keyMode: 'prod', privateKey: key }, { cwd: dir });
    expect([ok.code, ok.json['verdict'], ok.json['warnings']]).toEqual([0, 'allow', undefined]);
  });

  it('oss-prod oauth modes need complete evidence; unknown auth_mode is refused', async () => {
    const dir = tempDir();
    const key = v7PrivateKeyFile();
    const bad = await callJson({ call: writeCall(dir, { ...READ_CALL, context: { ...READ_CALL.context, auth_mode: 'kerberos' } }) }, { cwd: dir });
    expect([bad.code, bad.json['error']]).toEqual([6, 'unsupported context.auth_mode: kerberos']);
    const partial = await callJson(
      { call: writeCall(dir, { ...READ_CALL, context: { ...READ_CALL.context, auth_mode: 'oauth', oauth_evidence: { issuer: 'i' } } }, 'o.json'), profile: 'oss-prod', keyMode: 'prod', privateKey: key },
      { cwd: dir },
    );
    expect(partial.code).toBe(6);
    expect(String(partial.json['error'])).toMatch(/^oss-prod profile requires oauth_evidence fields for auth_mode oauth: audience, subject/);
  });

  it('a standard-profile call without context warns about the fallback', async () => {
    const r = await callJson({ call: compat('call-openai.json'), adapter: 'openai' });
    expect(r.json['warnings']).toEqual(['standard profile applied fallback intent context; use --profile oss-prod for strict context enforcement']);
  });

  it('kill-switch state: unreadable is fatal for low risk, fail-closed block for high risk', async () => {
    const dir = tempDir();
    const low = await callJson({ call: writeCall(dir, READ_CALL), killSwitchState: 'missing.json' }, { cwd: dir });
    expect(low.code).toBe(6);
    expect(String(low.json['error'])).toMatch(/kill switch state/);
    const high = await callJson({ call: writeCall(dir, { ...READ_CALL, context: { ...READ_CALL.context, risk_class: 'high' } }, 'h.json'), killSwitchState: 'missing.json' }, { cwd: dir });
    expect([high.code, high.json['verdict'], high.json['reason_codes']]).toEqual([3, 'block', ['kill_switch_state_unavailable']]);
    expect(high.json['kill_switch']).toMatchObject({ status: 'unavailable' });
  });

  it('an active kill switch blocks and appends the kill-switch journal', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'ks.json'), JSON.stringify({ schema_id: 'gait.gate.kill_switch_state', schema_version: '1.0.0', entries: [{ id: 'stop-reads', enabled: true, tool_name: 'read_file' }] }));
    const r = await callJson({ call: writeCall(dir, READ_CALL), killSwitchState: 'ks.json' }, { cwd: dir });
    expect(r.code).toBe(3);
    expect(r.json['reason_codes']).toEqual(expect.arrayContaining(['kill_switch_active', 'kill_switch_tool_name_active']));
    const journal = readFileSync(join(dir, 'kill_switch_journal.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(journal).toHaveLength(1);
    expect(journal[0]).toMatchObject({ trace_id: r.json['trace_id'], matched_entry_ids: ['stop-reads'] });
  });

  it('emergency stop: a stopped job blocks (and is recorded); an unknown job blocks as unavailable', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'jobs', 'job-1'), { recursive: true });
    writeFileSync(join(dir, 'jobs', 'job-1', 'state.json'), JSON.stringify({ job_id: 'job-1', status: 'emergency_stopped' }));
    const call = { ...READ_CALL, context: { ...READ_CALL.context, job_id: 'job-1' } };
    const stopped = await callJson({ call: writeCall(dir, call), jobRoot: 'jobs' }, { cwd: dir });
    expect([stopped.code, stopped.json['verdict'], stopped.json['job_id']]).toEqual([3, 'block', 'job-1']);
    expect(stopped.json['reason_codes']).toContain('emergency_stop_preempted');
    expect(stopped.json['violations']).toContain('emergency_stop_active');
    const events = readFileSync(join(dir, 'jobs', 'job-1', 'events.jsonl'), 'utf8');
    expect(JSON.parse(events.trim())).toMatchObject({ type: 'dispatch_blocked', trace_id: stopped.json['trace_id'] });
    const unknown = await callJson({ call: writeCall(dir, { ...call, context: { ...call.context, job_id: 'job-404' } }, 'u.json'), jobRoot: 'jobs' }, { cwd: dir });
    expect(unknown.code).toBe(3);
    expect(unknown.json['reason_codes']).toContain('emergency_stop_state_unavailable');
    writeFileSync(join(dir, 'jobs', 'job-1', 'state.json'), JSON.stringify({ status: 'running' }));
    const running = await callJson({ call: writeCall(dir, call, 'r.json'), jobRoot: 'jobs' }, { cwd: dir });
    expect([running.code, running.json['verdict']]).toEqual([0, 'allow']);
  });

  it('--trace-out writes there; a parent-traversing relative path is refused', async () => {
    const dir = tempDir();
    const r = await callJson({ call: writeCall(dir, READ_CALL), traceOut: 'out/trace.json' }, { cwd: dir });
    expect(r.json['trace_path']).toBe(join(dir, 'out', 'trace.json'));
    expect(JSON.parse(readFileSync(join(dir, 'out', 'trace.json'), 'utf8'))['trace_id']).toBe(r.json['trace_id']);
    const bad = await callJson({ call: writeCall(dir, READ_CALL), traceOut: '../trace.json' }, { cwd: dir });
    expect([bad.code, bad.json['error']]).toEqual([6, 'relative trace path must not traverse parent directories']);
  });

  it('--run-id names the run and the trace file; the default run id comes from the intent digest', async () => {
    const dir = tempDir();
    const r = await callJson({ call: writeCall(dir, READ_CALL), runId: 'nightly build #7' }, { cwd: dir });
    expect(r.json['run_id']).toBe('run_nightly_build_7');
    expect(String(r.json['trace_path'])).toMatch(/trace_run_nightly_build_7_\d{8}T\d{6}\.\d{9}\.json$/);
    const d = await callJson({ call: writeCall(dir, READ_CALL) }, { cwd: dir });
    expect(d.json['run_id']).toBe(`run_mcp_${String(d.json['intent_digest']).slice(0, 12)}`);
    expect(normalizeRunId('  __x__ ')).toBe('run_x');
    expect(normalizeRunId('run_ok')).toBe('run_ok');
    expect(normalizeRunId('***')).toBe('');
    expect(traceTimestamp({ sec: 1773309600, nsec: 5, offset: 0 })).toBe('20260312T100000.000000005');
  });

  it('--runpack-out and --pack-out write a signed, verifiable runpack and pack', async () => {
    const dir = tempDir();
    const r = await callJson({ call: compat('call-mcp-write.json'), runpackOut: 'rp.zip', packOut: 'pack.zip', runId: 'r1' }, { cwd: dir });
    expect(r.code).toBe(4);
    expect(r.json['runpack_path']).toBe(join(dir, 'rp.zip'));
    expect(r.json['pack_path']).toBe(join(dir, 'pack.zip'));
    expect(String(r.json['pack_id'])).toMatch(/^[0-9a-f]{64}$/);
    const rp = readRunpack(readFileSync(join(dir, 'rp.zip')));
    expect(rp.manifest.run_id).toBe('run_r1');
    expect(rp.intents.map((i) => [i.intent_id, i.tool_name, i.args])).toEqual([['intent_1', 'write_file', undefined]]);
    expect(rp.results.map((x) => x.status)).toEqual(['error']);
    expect(rp.run.timeline?.map((t) => t.event)).toEqual(['proxy_eval_start', 'proxy_eval_finish']);
    const key = loadOrCreateDefaultKey(join(dir, '.ward')).key;
    expect(packVerified(verifyPack(readFileSync(join(dir, 'pack.zip')), { keys: [key] }), true)).toBe(true);
  });

  it('--export-log-out and --export-otel-out append one line per decision', async () => {
    const dir = tempDir();
    for (let i = 0; i < 2; i++) {
      const r = await callJson({ call: writeCall(dir, READ_CALL), exportLogOut: 'log.jsonl', exportOtelOut: 'otel.jsonl', runId: 'exp' }, { cwd: dir });
      expect(r.json['log_export']).toBe(join(dir, 'log.jsonl'));
      expect(r.json['otel_export']).toBe(join(dir, 'otel.jsonl'));
    }
    const log = readFileSync(join(dir, 'log.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(log).toHaveLength(2);
    expect(log[0]).toMatchObject({ run_id: 'run_exp', session_id: 's', tool_name: 'read_file', verdict: 'allow', reason_codes: ['matched_rule_allow_reads'] });
    const otelText = readFileSync(join(dir, 'otel.jsonl'), 'utf8').trim().split('\n');
    expect(otelText[0]).toMatch(/^\{"time_unix_nano":\d{19},"severity_text":"INFO","body":"gait.mcp.proxy.decision"/);
    expect(JSON.parse(otelText[1]!).attributes).toMatchObject({ 'gait.verdict': 'allow', 'gait.run_id': 'run_exp', 'gait.tool_name': 'read_file' });
  });

  it('text mode prints the verdict and the trace path', async () => {
    const dir = tempDir();
    const p = inProcess(dir);
    await runMcpCall(p.ctx, { policy: POLICY, call: compat('call-claude-code.json'), adapter: 'claude_code' });
    expect(p.ctx.exitCode).toBe(3);
    expect(p.out()).toMatch(/^mcp proxy: verdict=block tool=tool\.exec\nreasons: destructive_apply_requires_approval, matched_rule_block_exec\ntrace: \/.*\.json\nwarning: standard profile/);
  });

  it('dry_run exits 0', async () => {
    const dir = tempDir();
    const r = await callJson({ call: writeCall(dir, { ...READ_CALL, name: 'tool.deploy' }) }, { cwd: dir });
    expect([r.code, r.json['verdict']]).toEqual([0, 'dry_run']);
  });
});
