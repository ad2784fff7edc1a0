import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spoolTrace } from '../../src/store/index.js';
import { DEMO_RECORD, ward, workdir } from '../pack/cli.js';
import { startChild } from './spawn.js';
import { trace } from './traces.js';

describe('ward store', () => {
  it('ingests spooled traces and lists them with filters', async () => {
    const cwd = workdir();
    const state = join(cwd, '.ward');
    for (let n = 0; n < 12; n++) spoolTrace(state, trace(n));
    const all = await ward(['store', 'list', '--json'], cwd);
    expect(all.json).toMatchObject({ ok: true, count: 12 });
    const blocked = await ward(['store', 'list', '--verdict', 'block', '--tool', 'fs.write', '--json'], cwd);
    expect(blocked.json['entries'].map((e: { id: string }) => e.id)).toEqual([6, 0].map((n) => trace(n)['event_id']));
    const show = await ward(['store', 'show', trace(3)['trace_id'] as string, '--json'], cwd);
    expect(show.json['trace']['event_id']).toBe(trace(3)['event_id']);
    expect((await ward(['store', 'show', 'nothing-like-this', '--json'], cwd)).code).toBe(6);
  });

  it('ingests files and directories given on the command line, idempotently', async () => {
    const cwd = workdir();
    const traces = join(cwd, 'traces');
    mkdirSync(traces);
    for (let n = 0; n < 3; n++) writeFileSync(join(traces, `trace_${n}.json`), JSON.stringify(trace(n)));
    expect((await ward(['store', 'ingest', traces, '--json'], cwd)).json).toMatchObject({ stored: 3, duplicates: 0 });
    expect((await ward(['store', 'ingest', traces, '--json'], cwd)).json).toMatchObject({ stored: 0, duplicates: 3 });
  });

  it('applies retention and round-trips export/import', async () => {
    const cwd = workdir();
    await ward(['run', 'record', '--input', DEMO_RECORD, '--json'], cwd);
    for (let n = 0; n < 5; n++) spoolTrace(join(cwd, '.ward'), trace(n));
    const exported = await ward(['store', 'export', '--out', 'all.zip', '--json'], cwd);
    expect(exported.json).toMatchObject({ ok: true, count: 6 });
    const gc = await ward(['store', 'gc', '--max-count', '1', '--kind', 'trace', '--json'], cwd);
    expect(gc.json).toMatchObject({ removed: 4, remaining: 1 });
    expect((await ward(['store', 'gc', '--max-age', 'soon', '--json'], cwd)).code).toBe(6);
    const imported = await ward(['store', 'import', 'all.zip', '--json'], cwd);
    expect(imported.json).toMatchObject({ ok: true, stored: 4, duplicates: 2 });
    expect((await ward(['store', 'list', '--kind', 'trace', '--json'], cwd)).json['count']).toBe(5);
  });

  it('keeps short-lived commands working while another process owns the store', async () => {
    const cwd = workdir();
    await ward(['run', 'record', '--input', DEMO_RECORD, '--json'], cwd);
    const build = await ward(['pack', 'build', '--from', 'run_demo', '--json'], cwd);
    await ward(['store', 'list', '--json'], cwd); // ingest the spooled runpack and pack
    const holder = await startChild('hold', join(cwd, '.ward'));
    try {
      await holder.waitFor((l) => l === 'READY');
      const list = await ward(['store', 'list', '--json'], cwd);
      expect(list.code).toBe(1);
      expect(list.json['error']).toContain(`held by pid ${holder.process.pid}`);
      // Recording and building spool instead of opening the store; reads by id use the object files.
      expect((await ward(['run', 'record', '--input', DEMO_RECORD, '--run-id', 'run_two', '--json'], cwd)).code).toBe(0);
      const inspect = await ward(['pack', 'inspect', (build.json['pack_id'] as string).slice(0, 12), '--json'], cwd);
      expect(inspect.code).toBe(0);
      expect(inspect.json['source_ref']).toBe('run_demo');
    } finally {
      holder.process.kill('SIGKILL');
      await holder.exited;
    }
    const after = await ward(['store', 'list', '--kind', 'runpack', '--json'], cwd);
    expect(after.json['entries'].map((e: { run_id: string }) => e.run_id).sort()).toEqual(['run_demo', 'run_two']);
  });
});

describe('ward pack build --type authorization', () => {
  it('packs a decision trace with the audit files found next to it', async () => {
    const cwd = workdir();
    const id = 'f'.repeat(24);
    const t = { ...trace(1), trace_id: id, approval_token_ref: 'tok', policy_digest: 'b'.repeat(64), intent_digest: 'c'.repeat(64) };
    writeFileSync(join(cwd, `trace_${id}.json`), JSON.stringify(t));
    writeFileSync(join(cwd, `approval_audit_${id}.json`), JSON.stringify({ schema_id: 'gait.gate.approval_audit_record', trace_id: id }));
    const build = await ward(['pack', 'build', '--type', 'authorization', '--from', `trace_${id}.json`, '--json'], cwd);
    expect(build.code).toBe(0);
    expect(build.json).toMatchObject({ pack_type: 'authorization', source_ref: id });
    const verify = await ward(['pack', 'verify', build.json['path'], '--require-signature', '--json'], cwd);
    expect(verify.code).toBe(0);
    expect(verify.json['verify']['files_checked']).toBe(4);
  });
});
