import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WARD } from '../cli/run.js';

/*
 * A hook call almost never builds a runpack or pack, so it must not load the code that does
 * (zip, fflate with worker_threads, node:zlib): the decision service loads it only for a call that
 * may build one. Needs `npm run build` (the hook runs from its bundle).
 */
describe('ward hook claude-code loads no runpack or pack code', () => {
  it('neither node:zlib nor worker_threads is required for an allowed PreToolUse call', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ward-hook-lazy-'));
    writeFileSync(join(dir, 'policy.yaml'), 'default_verdict: allow\n');
    const recorder = join(dir, 'record.cjs');
    writeFileSync(
      recorder,
      "const M = require('node:module'); const load = M._load; const seen = new Set();\n" +
        "M._load = function (r, ...a) { seen.add(String(r).replace(/^node:/, '')); return load.call(this, r, ...a); };\n" +
        "process.on('exit', () => process.stderr.write('LOADED ' + [...seen].join(',') + '\\n'));\n",
    );
    const event = { session_id: 's', cwd: dir, hook_event_name: 'PreToolUse', tool_name: 'Read', tool_input: { file_path: join(dir, 'policy.yaml') } };
    const r = spawnSync(process.execPath, ['-r', recorder, WARD, 'hook', 'claude-code', '--policy', 'policy.yaml', '--state-dir', join(dir, '.ward')], {
      cwd: dir,
      input: JSON.stringify(event),
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: 'allow' } });
    const loaded = /LOADED (.*)/.exec(r.stderr)?.[1]?.split(',') ?? [];
    expect(loaded).toContain('crypto'); // the recorder sees the bundle's builtins
    expect(loaded).not.toContain('zlib');
    expect(loaded).not.toContain('worker_threads');
  });
});
