// Witnessed context evidence through the real proxy (issue 19, part 2): results of tools the policy
// classes as retrieval become ContextSpec v1 records Ward builds itself; a call whose rule requires
// context evidence is bound to the session's witnessed envelope (`context_source: witnessed`),
// freshness applies to when Ward saw the results, and the envelope is kept in the session's signed
// runpack.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir, ward as runWard } from '../cli/run.js';
import { readRunpack } from '../../src/runpack/index.js';
import { FILESYSTEM, textOf, throughWard, traces, wardOf } from './helpers.js';

const POLICY = `default_verdict: allow
context:
  retrieval_tools: [read_text_file]
rules:
  - name: writes-need-fresh-context
    priority: 10
    effect: allow
    match:
      tool_names: [write_file]
    require_context_evidence: true
    max_context_age_seconds: 2
`;

describe('witnessed context evidence', () => {
  it('a write that needs context evidence: blocked before any retrieval, allowed after one (witnessed), blocked again once it is stale', async () => {
    const cwd = tempDir('ward-context-');
    writeFileSync(join(cwd, 'policy.yaml'), POLICY);
    const root = join(cwd, 'root');
    mkdirSync(root);
    writeFileSync(join(root, 'spec.md'), '# The spec\nWrite the summary to out.txt.\n');
    const state = join(cwd, '.ward');
    const p = await throughWard(['--policy', 'policy.yaml', '--state-dir', state], [FILESYSTEM, root], { cwd });
    const write = (n: number) => p.client.callTool({ name: 'write_file', arguments: { path: join(root, `out${n}.txt`), content: 'summary' } });
    try {
      const before = await write(1);
      expect(wardOf(before)['reason_codes']).toEqual(expect.arrayContaining(['context_evidence_missing']));

      expect(textOf(await p.client.callTool({ name: 'read_text_file', arguments: { path: join(root, 'spec.md') } }))).toContain('The spec');
      const after = await write(2);
      expect(after.isError ?? false, textOf(after)).toBe(false);

      await new Promise((r) => setTimeout(r, 3200));
      const stale = await write(3);
      expect(wardOf(stale)['reason_codes']).toEqual(expect.arrayContaining(['context_evidence_witnessed', 'context_freshness_exceeded']));
    } finally {
      await p.close();
    }
    const writes = traces(state).filter((t) => t['tool_name'] === 'write_file');
    const allowed = writes.find((t) => t['verdict'] === 'allow')!;
    expect(allowed['context_source']).toBe('witnessed');
    expect(allowed['context_ref_count']).toBe(1);
    expect(allowed['context_evidence_mode']).toBe('required');
    expect(allowed['reason_codes']).toEqual(expect.arrayContaining(['context_evidence_witnessed']));
    const read = traces(state).find((t) => t['tool_name'] === 'read_text_file')!;

    // The session's runpack (spooled for the store, signed) carries the witnessed envelope.
    const spool = join(state, 'spool');
    const name = readdirSync(spool).find((n) => n.startsWith('runpack_'))!;
    const runpack = readRunpack(readFileSync(join(spool, name)));
    expect(runpack.refs.context_set_digest).toBe(allowed['context_set_digest']);
    expect(runpack.refs.receipts).toHaveLength(1);
    expect(runpack.refs.receipts[0]).toMatchObject({
      ref_id: `witness:${String(read['trace_id'])}`,
      source_type: 'mcp_tool_result',
      immutability: 'unknown',
      redaction_mode: 'reference',
    });
    expect(String(runpack.refs.receipts[0]!['source_locator'])).toContain('/tools/read_text_file?path=');
  }, 60_000);

  it('pack diff shows drift in witnessed context: the same document in another session is runtime_only, a changed one semantic', async () => {
    const cwd = tempDir('ward-context-drift-');
    writeFileSync(join(cwd, 'policy.yaml'), POLICY);
    const root = join(cwd, 'root');
    mkdirSync(root);
    const state = join(cwd, '.ward');
    const session = async (spec: string) => {
      writeFileSync(join(root, 'spec.md'), spec);
      const p = await throughWard(['--policy', 'policy.yaml', '--state-dir', state], [FILESYSTEM, root], { cwd });
      try {
        await p.client.callTool({ name: 'read_text_file', arguments: { path: join(root, 'spec.md') } });
      } finally {
        await p.close();
      }
    };
    const spooled = () => new Set(existsSync(join(state, 'spool')) ? readdirSync(join(state, 'spool')).filter((n) => n.startsWith('runpack_')) : []);
    const next = async (spec: string) => {
      const before = spooled();
      await session(spec);
      return [...spooled()].find((n) => !before.has(n))!;
    };
    const first = await next('# The spec\nversion one\n');
    const again = await next('# The spec\nversion one\n');
    const second = await next('# The spec\nversion two\n');
    const pack = (name: string, out: string) => {
      const r = runWard(['pack', 'build', '--type', 'run', '--from', join(state, 'spool', name), '--out', join(cwd, out), '--state-dir', state, '--json'], { cwd });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      return join(cwd, out);
    };
    const a = pack(first, 'a.zip');
    // The same document read in another session: only when it was read (and which call read it) differ.
    const same = runWard(['pack', 'diff', a, pack(again, 'a2.zip'), '--state-dir', state, '--json'], { cwd });
    expect(same.stdout).toContain('"context_drift_classification":"runtime_only"');
    const diff = runWard(['pack', 'diff', a, pack(second, 'b.zip'), '--state-dir', state, '--json'], { cwd });
    expect(diff.code, diff.stdout + diff.stderr).toBe(2);
    expect(diff.stdout).toContain('"context_drift_classification":"semantic"');
  }, 60_000);
});
