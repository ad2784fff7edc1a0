import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listFiles } from '../canon/fixtures.js';
import { parsePrivateKey } from '../../src/keys/index.js';
import { buildRunPack, verifyPack } from '../../src/pack/index.js';
import { openZip, writeDeterministicZip } from '../../src/zip/index.js';
import { ward, workdir } from './cli.js';
import { comparable, GAIT, gaitFile, gaitJson, privateKeyCopy, referenceChainProblems, SHARED_GAIT } from './gait-interop.js';

const PUBLIC_KEY = gaitFile('test_key_a_public.key');

function entries(bytes: Buffer): Map<string, Buffer> {
  const zip = openZip(bytes);
  return new Map(zip.entries.map((e) => [e.name, zip.read(e)]));
}

describe('the reference artifacts in fixtures/gait-interop', () => {
  it('are byte-identical to ../shared/fixtures/gait-interop wherever that copy exists (CI has it beside the clone)', () => {
    const ours = listFiles(GAIT);
    expect(ours).toContain('gait_pack_run_tck_signed.zip');
    for (const rel of listFiles(SHARED_GAIT)) {
      expect(ours, `fixtures/gait-interop/${rel} is missing`).toContain(rel);
      expect(readFileSync(join(GAIT, rel)).equals(readFileSync(join(SHARED_GAIT, rel))), `fixtures/gait-interop/${rel} differs`).toBe(true);
    }
  });
});

describe('ward pack verify of packs the reference built', () => {
  it.each([
    ['gait_pack_run_tck_signed.zip', 'gait_pack_verify_signed.out.json', ['--public-key', PUBLIC_KEY]],
    ['gait_pack_run_tck_unsigned.zip', 'gait_pack_verify_unsigned.out.json', []],
  ])('%s verifies with the reference\'s own output (%s)', async (pack, out, keyArgs) => {
    const cwd = workdir();
    // The reference ran `gait pack verify pack.zip …`: the same argument gives the same output, path included.
    copyFileSync(gaitFile(pack), join(cwd, 'pack.zip'));
    const run = await ward(['pack', 'verify', 'pack.zip', ...keyArgs, '--json'], cwd);
    expect(run.code).toBe(0);
    expect(comparable(run.json, ['correlation_id'])).toEqual(comparable(gaitJson(out), ['correlation_id']));
  });

  it('verifies the signed pack with the signature required, proof-record signatures included', async () => {
    const run = await ward(['pack', 'verify', gaitFile('gait_pack_run_tck_signed.zip'), '--public-key', PUBLIC_KEY, '--require-signature', '--json'], workdir());
    expect(run.code).toBe(0);
    expect(run.json['verify']).toMatchObject({ signature_status: 'verified', proof_records_verified: 3 });
    expect(run.json['verify']['signature_errors']).toBeUndefined();
    expect(run.json['verify']['legacy_proof_records']).toBeUndefined();
  });

  it('reaches the wrong-key check on a reference pack (signature failed, exit 2)', async () => {
    const cwd = workdir();
    await ward(['keys', 'init', '--json'], cwd);
    const other = join(cwd, '.ward', 'keys');
    const publicKey = listFiles(other).find((f) => f.endsWith('public.key'));
    expect(publicKey).toBeDefined();
    const run = await ward(['pack', 'verify', gaitFile('gait_pack_run_tck_signed.zip'), '--public-key', join(other, publicKey!), '--json'], cwd);
    expect(run.code).toBe(2);
    expect(run.json['verify']['signature_status']).toBe('failed');
  });

  it('reaches the tamper and undeclared-entry checks on a reference pack (exit 2)', async () => {
    const cwd = workdir();
    const zip = openZip(readFileSync(gaitFile('gait_pack_run_tck_signed.zip')));
    const rewrite = (name: string, mutate: (files: { path: string; data: Buffer }[]) => void) => {
      const files = zip.entries.map((e) => ({ path: e.name, data: zip.read(e) }));
      mutate(files);
      writeFileSync(join(cwd, name), writeDeterministicZip(files));
      return name;
    };
    const tampered = rewrite('tampered.zip', (files) => {
      const payload = files.find((f) => f.path === 'run_payload.json')!;
      payload.data = Buffer.from(payload.data.toString().replace('"intents_count":1', '"intents_count":2'));
    });
    const extra = rewrite('extra.zip', (files) => files.push({ path: 'payload.sh', data: Buffer.from('echo hi\n') }));
    const t = await ward(['pack', 'verify', tampered, '--public-key', PUBLIC_KEY, '--json'], cwd);
    expect(t.code).toBe(2);
    expect(t.json['verify']['hash_mismatches'].map((m: { path: string }) => m.path)).toEqual(['run_payload.json']);
    const u = await ward(['pack', 'verify', extra, '--public-key', PUBLIC_KEY, '--json'], cwd);
    expect(u.code).toBe(2);
    expect(u.json['verify']).toMatchObject({ undeclared_files: ['payload.sh'], signature_status: 'failed' });
  });

  it('verifies the three context-conformance packs, and diffs them as the reference does', async () => {
    const cwd = workdir();
    for (const name of ['source', 'runtime', 'semantic']) {
      expect((await ward(['pack', 'verify', gaitFile(`gait_pack_context_${name}.zip`), '--json'], cwd)).code).toBe(0);
    }
    for (const name of ['runtime', 'semantic']) {
      const run = await ward(['pack', 'diff', gaitFile('gait_pack_context_source.zip'), gaitFile(`gait_pack_context_${name}.zip`), '--json'], cwd);
      const reference = gaitJson(`gait_pack_diff_source_${name}.out.json`);
      expect(run.code).toBe(2);
      // Ward nests the diff under `result` (docs/compatibility.md); its content is the reference's.
      expect(run.json['diff']['result']).toEqual(reference['diff']['Result']);
      expect(comparable(run.json, ['correlation_id', 'diff'])).toEqual(comparable(reference, ['correlation_id', 'diff']));
    }
  });

  it('proof records of the reference packs follow the README rule (the test\'s own implementation)', () => {
    for (const pack of ['gait_pack_run_tck_signed.zip', 'gait_pack_run_tck_unsigned.zip', 'gait_pack_context_source.zip']) {
      expect(referenceChainProblems(entries(readFileSync(gaitFile(pack))).get('proof_records.jsonl')!)).toEqual([]);
    }
  });
});

describe('packs Ward builds', () => {
  it('hash their proof records the reference way: the same records as the reference for the same files', () => {
    const key = parsePrivateKey(readFileSync(gaitFile('test_key_a_private.key'), 'utf8'));
    const built = buildRunPack(readFileSync(gaitFile('gait_runpack_run_tck.zip')), { producerVersion: '0.0.0-dev', signingKey: key });
    const ours = entries(built.bytes);
    const theirs = entries(readFileSync(gaitFile('gait_pack_run_tck_signed.zip')));
    expect(referenceChainProblems(ours.get('proof_records.jsonl')!)).toEqual([]);
    for (const file of ['run_payload.json', 'context_envelope.json']) expect(ours.get(file)!.equals(theirs.get(file)!), file).toBe(true);
    // The first two records (context_envelope.json, run_payload.json) describe identical files, so they
    // are identical, signatures included; the third differs only because source/runpack.zip is re-zipped.
    const ourLines = ours.get('proof_records.jsonl')!.toString().split('\n');
    const theirLines = theirs.get('proof_records.jsonl')!.toString().split('\n');
    expect(ourLines.slice(0, 2)).toEqual(theirLines.slice(0, 2));
    expect(ourLines).toHaveLength(3);
  });

  it('built by ward pack build verify under the README rule', async () => {
    const cwd = workdir();
    const out = join(cwd, 'tck.pack.zip');
    const build = await ward(['pack', 'build', '--type', 'run', '--from', gaitFile('gait_runpack_run_tck.zip'), '--out', out, '--json'], cwd);
    expect(build.code).toBe(0);
    expect(referenceChainProblems(entries(readFileSync(out)).get('proof_records.jsonl')!)).toEqual([]);
    expect(verifyPack(readFileSync(out)).legacy_proof_records).toBeUndefined();
  });
});

describe('ward run record of the reference inputs', () => {
  it.each([
    ['run_record_tck.json', 'gait_run_record_tck.out.json', 'gait_runpack_run_tck.zip'],
    ['run_record_legacy.json', 'gait_run_record_legacy.out.json', 'gait_runpack_run_legacy_fixture.zip'],
  ])('%s gives the reference\'s manifest digest and the same runpack files', async (input, out, runpack) => {
    const cwd = workdir();
    const run = await ward(['run', 'record', '--input', gaitFile(input), '--key-mode', 'prod', '--private-key', privateKeyCopy(), '--out-dir', 'g', '--json'], cwd);
    const reference = gaitJson(out);
    expect(run.code).toBe(0);
    expect(run.json['manifest_digest']).toBe(reference['manifest_digest']);
    // Everything but the footer, which names Ward (docs/compatibility.md), is the reference's output.
    expect(comparable(run.json, ['correlation_id', 'ticket_footer'])).toEqual(comparable(reference, ['correlation_id', 'ticket_footer']));
    expect(run.json['ticket_footer']).toBe(reference['ticket_footer'].replace('GAIT ', 'WARD ').replace('gait verify', 'ward verify'));
    // refs.json carries the resolved evidence mode, and every stored file (manifest and its signature included) is the reference's.
    const ours = entries(readFileSync(join(cwd, 'g', `runpack_${reference['run_id']}.zip`)));
    const theirs = entries(readFileSync(gaitFile(runpack)));
    expect(JSON.parse(ours.get('refs.json')!.toString())['context_evidence_mode']).toBe('best_effort');
    expect([...ours.keys()].sort()).toEqual([...theirs.keys()].sort());
    for (const [name, data] of theirs) expect(ours.get(name)!.equals(data), name).toBe(true);
  });

  it('writes the evidence mode as flag > the input\'s refs > best_effort', async () => {
    const cwd = workdir();
    const input = gaitJson('run_record_tck.json');
    const modeOf = async (args: string[], refsMode?: string) => {
      const copy = structuredClone(input);
      copy['refs']['receipts'] = [];
      if (refsMode) copy['refs']['context_evidence_mode'] = refsMode;
      else delete copy['refs']['context_evidence_mode'];
      const path = join(cwd, `in-${Math.random().toString(36).slice(2)}.json`);
      writeFileSync(path, JSON.stringify(copy));
      const run = await ward(['run', 'record', '--input', path, '--out-dir', join(cwd, 'o'), '--json', ...args], cwd);
      expect(run.code, run.stdout).toBe(0);
      const refs = entries(readFileSync(join(cwd, 'o', 'runpack_run_tck.zip'))).get('refs.json')!;
      return JSON.parse(refs.toString())['context_evidence_mode'] as string;
    };
    expect(await modeOf([])).toBe('best_effort');
    expect(await modeOf([], 'best_effort')).toBe('best_effort');
    expect(await modeOf(['--context-evidence-mode', 'best_effort'], 'BEST_EFFORT')).toBe('best_effort');
  });
});

describe('ward trace verify of a trace the reference signed', () => {
  it('verifies gait_trace_allow.json with the reference\'s key, as the reference does', async () => {
    const cwd = workdir();
    copyFileSync(gaitFile('gait_trace_allow.json'), join(cwd, 'trace.json'));
    const run = await ward(['trace', 'verify', 'trace.json', '--public-key', PUBLIC_KEY, '--json'], cwd);
    expect(run.code).toBe(0);
    const reference = gaitJson('gait_trace_verify.out.json');
    // `format` is Ward's addition (trace, jws or dsse; docs/compatibility.md).
    expect(comparable(run.json, ['correlation_id', 'format'])).toEqual(comparable(reference, ['correlation_id']));
  });

  it('fails it with another key (exit 2)', async () => {
    const cwd = workdir();
    await ward(['keys', 'init', '--json'], cwd);
    const keys = join(cwd, '.ward', 'keys');
    const publicKey = listFiles(keys).find((f) => f.endsWith('public.key'))!;
    const run = await ward(['trace', 'verify', gaitFile('gait_trace_allow.json'), '--public-key', join(keys, publicKey), '--json'], cwd);
    expect(run.code).toBe(2);
    expect(run.json['ok']).toBe(false);
  });
});

describe('JSON output shapes where Ward and the reference run the same command', () => {
  it('ward verify: the reference members (signature_note, next_commands) and no zero signature counts', async () => {
    const cwd = workdir();
    const runpack = gaitFile('gait_runpack_run_tck.zip');
    const unkeyed = await ward(['verify', runpack, '--json'], cwd);
    expect(unkeyed.code).toBe(0);
    expect(unkeyed.json).toMatchObject({ ok: true, run_id: 'run_tck', manifest_digest: gaitJson('gait_run_record_tck.out.json')['manifest_digest'], signature_status: 'skipped', signatures_total: 1 });
    expect(unkeyed.json['signatures_valid']).toBeUndefined();
    expect(unkeyed.json['signature_note']).toBe('signature checks were skipped because no verify key was provided');
    expect(unkeyed.json['next_commands']).toEqual(['ward regress bootstrap --from run_tck --json --junit ./junit.xml', 'ward pack build --type run --from run_tck']);
    const keyed = await ward(['verify', runpack, '--public-key', PUBLIC_KEY, '--require-signature', '--json'], cwd);
    expect(keyed.json).toMatchObject({ ok: true, signature_status: 'verified', signatures_valid: 1, signature_note: 'signatures verified' });
  });

  it('ward trace verify: a failure carries error_code, error_category, hint and retryable', async () => {
    const cwd = workdir();
    const trace = gaitJson('gait_trace_allow.json');
    trace['verdict'] = 'block';
    const path = join(cwd, 'trace_tampered.json');
    writeFileSync(path, JSON.stringify(trace));
    const run = await ward(['trace', 'verify', path, '--public-key', PUBLIC_KEY, '--json'], cwd);
    expect(run.code).toBe(2);
    expect(run.json).toMatchObject({
      ok: false,
      trace_id: trace['trace_id'],
      error_code: 'verification_failed',
      error_category: 'verification_failed',
      hint: 're-run verify after checking artifact integrity',
      retryable: false,
    });
    expect(typeof run.json['error']).toBe('string');
  });

  it('ward pack verify: a verification that stops still reports pack_id and a verify object', async () => {
    const cwd = workdir();
    const zip = openZip(readFileSync(gaitFile('gait_pack_run_tck_unsigned.zip')));
    const files = zip.entries.map((e) => {
      const data = zip.read(e);
      if (e.name !== 'pack_manifest.json') return { path: e.name, data };
      const manifest = JSON.parse(data.toString()) as Record<string, unknown>;
      return { path: e.name, data: Buffer.from(JSON.stringify({ ...manifest, producer_version: '9.9.9' })) };
    });
    const path = join(cwd, 'forged.zip');
    writeFileSync(path, writeDeterministicZip(files));
    const run = await ward(['pack', 'verify', path, '--json'], cwd);
    expect(run.code).toBe(2);
    const claimed = { pack_id: gaitJson('gait_pack_verify_unsigned.out.json')['pack_id'], pack_type: 'run', source_ref: 'run_tck' };
    expect(run.json).toMatchObject({ ok: false, operation: 'verify', path, ...claimed, verify: { ...claimed, files_checked: 4 }, schema_id: 'gait.pack.output', error_code: 'verification_failed' });
    expect(run.json['error']).toMatch(/^pack_id mismatch/);
  });
});
