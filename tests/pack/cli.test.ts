import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openZip, writeDeterministicZip } from '../../src/zip/index.js';
import { DEMO_RECORD, REPO_ROOT, ward, workdir } from './cli.js';
import { RETRIEVED_LATER } from './helpers.js';

async function recordDemo(cwd: string, extra: string[] = []) {
  return ward(['run', 'record', '--input', DEMO_RECORD, '--json', ...extra], cwd);
}

describe('ward run record / verify', () => {
  it('records a signed runpack with Ward\'s key and verifies it by run id', async () => {
    const cwd = workdir();
    const rec = await recordDemo(cwd);
    expect(rec.code).toBe(0);
    expect(rec.json).toMatchObject({ ok: true, run_id: 'run_demo', bundle: './.ward/runpack_run_demo.zip', signature_status: 'signed' });
    expect(rec.json['ticket_footer']).toBe(`WARD run_id=run_demo manifest=sha256:${rec.json['manifest_digest']} verify="ward verify run_demo"`);
    expect(rec.json['warnings']).toEqual(['reference capture stripped raw intent arguments and raw result payloads after digesting']);
    const verify = await ward(['verify', 'run_demo', '--require-signature', '--json'], cwd);
    expect(verify.code).toBe(0);
    expect(verify.json).toMatchObject({ ok: true, run_id: 'run_demo', signature_status: 'verified', signatures_valid: 1, files_checked: 4 });
  });

  it('exits 6 on bad input and 2 on a tampered runpack', async () => {
    const cwd = workdir();
    expect((await ward(['run', 'record', '--input', join(cwd, 'missing.json'), '--json'], cwd)).code).toBe(6);
    expect((await recordDemo(cwd, ['--capture-mode', 'everything'])).code).toBe(6);
    await recordDemo(cwd);
    const path = join(cwd, '.ward', 'runpack_run_demo.zip');
    const zip = openZip(readFileSync(path));
    const files = zip.entries.map((e) => ({ path: e.name, data: e.name === 'intents.jsonl' ? Buffer.from('{}\n') : zip.read(e) }));
    writeFileSync(path, writeDeterministicZip(files));
    const verify = await ward(['verify', path, '--json'], cwd);
    expect(verify.code).toBe(2);
    expect(verify.json['hash_mismatches'][0].path).toBe('intents.jsonl');
    expect((await ward(['verify', 'run_nothing', '--json'], cwd)).code).toBe(6);
  });

  it('binds a context envelope, warns on a bad one in best_effort, and refuses it in required mode', async () => {
    const cwd = workdir();
    const envelope = join(REPO_ROOT, 'fixtures', 'runs', 'context_envelope_demo.json');
    const bound = await recordDemo(cwd, ['--context-envelope', envelope, '--context-evidence-mode', 'required']);
    expect(bound.code).toBe(0);
    const inspect = await ward(['pack', 'inspect', join(cwd, '.ward', 'runpack_run_demo.zip'), '--json'], cwd);
    expect(inspect.json['inspect']['run_payload']).toMatchObject({ context_evidence_mode: 'required', context_ref_count: 1, context_privacy_mode: 'hashes' });

    writeFileSync(join(cwd, 'bad.json'), '{"records":[{"ref_id":"x"}]}');
    const lenient = await recordDemo(cwd, ['--context-envelope', 'bad.json']);
    expect(lenient.code).toBe(0);
    expect(lenient.json['warnings']).toContainEqual(expect.stringMatching(/^context envelope ignored: /));
    expect((await recordDemo(cwd, ['--context-envelope', 'bad.json', '--context-evidence-mode', 'required'])).code).toBe(6);
    expect((await recordDemo(cwd, ['--context-envelope', '../outside.json'])).code).toBe(6);
  });

  it('needs a key source with --profile strict (exit 6)', async () => {
    const cwd = workdir();
    await recordDemo(cwd);
    expect((await ward(['verify', 'run_demo', '--profile', 'strict', '--json'], cwd)).code).toBe(6);
  });
});

describe('ward pack build / verify / inspect / diff', () => {
  it('builds, verifies, inspects and diffs packs end to end', async () => {
    const cwd = workdir();
    await recordDemo(cwd);
    const build = await ward(['pack', 'build', '--type', 'run', '--from', 'run_demo', '--json'], cwd);
    expect(build.code).toBe(0);
    expect(build.json).toMatchObject({ ok: true, operation: 'build', pack_type: 'run', source_ref: 'run_demo', schema_id: 'gait.pack.output' });
    const packPath = join(cwd, build.json['path']);
    expect(existsSync(packPath)).toBe(true);

    const verify = await ward(['pack', 'verify', packPath, '--require-signature', '--json'], cwd);
    expect(verify.code).toBe(0);
    expect(verify.json['verify']).toMatchObject({ signature_status: 'verified', proof_records_verified: 3 });

    const inspect = await ward(['pack', 'inspect', packPath, '--json'], cwd);
    expect(inspect.json['inspect']['run_payload']).toMatchObject({ context_ref_count: 3, context_privacy_mode: 'reference' });

    const same = await ward(['pack', 'diff', packPath, packPath, '--json'], cwd);
    expect(same.code).toBe(0);
    expect(same.json['diff']['result']['summary']['changed']).toBe(false);

    const laterInput = join(cwd, 'later.json');
    writeFileSync(laterInput, RETRIEVED_LATER);
    await ward(['run', 'record', '--input', laterInput, '--run-id', 'run_later', '--json'], cwd);
    const later = await ward(['pack', 'build', '--from', 'run_later', '--json'], cwd);
    const diff = await ward(['pack', 'diff', packPath, join(cwd, later.json['path']), '--json', '--output', join(cwd, 'diff.json')], cwd);
    expect(diff.code).toBe(2);
    expect(diff.json).toMatchObject({ ok: false, operation: 'diff' });
    expect(diff.json['diff']['result']['summary']['context_drift_classification']).toBe('runtime_only');
    expect(JSON.parse(readFileSync(join(cwd, 'diff.json'), 'utf8'))['schema_id']).toBe('gait.pack.diff');
  });

  it('rejects tampered packs with exit 2 and names the problem', async () => {
    const cwd = workdir();
    await recordDemo(cwd);
    const build = await ward(['pack', 'build', '--from', 'run_demo', '--json'], cwd);
    const path = join(cwd, build.json['path']);
    const zip = openZip(readFileSync(path));
    const files = zip.entries.map((e) => ({ path: e.name, data: zip.read(e) }));
    writeFileSync(path, writeDeterministicZip([...files, { path: 'extra.txt', data: Buffer.from('x') }]));
    const verify = await ward(['pack', 'verify', path, '--json'], cwd);
    expect(verify.code).toBe(2);
    expect(verify.json['verify']['undeclared_files']).toEqual(['extra.txt']);
    writeFileSync(path, readFileSync(path).subarray(0, 200));
    const truncated = await ward(['pack', 'verify', path, '--json'], cwd);
    expect(truncated.code).toBe(2);
    expect(truncated.json['error']).toMatch(/truncated|not a zip/);
  });

  it('resolves store ids for inspect and diff', async () => {
    const cwd = workdir();
    await recordDemo(cwd);
    const build = await ward(['pack', 'build', '--from', 'run_demo', '--json'], cwd);
    const id = build.json['pack_id'] as string;
    const list = await ward(['store', 'list', '--kind', 'pack', '--json'], cwd);
    expect(list.json['entries'].map((e: { id: string }) => e.id)).toEqual([id]);
    const inspect = await ward(['pack', 'inspect', id.slice(0, 10), '--json'], cwd);
    expect(inspect.code).toBe(0);
    expect(inspect.json['pack_id']).toBe(id);
    expect((await ward(['pack', 'diff', id, id, '--json'], cwd)).code).toBe(0);
  });
});
