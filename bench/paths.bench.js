// Paths resolved on the file system (issue 26, finding 2): what the edge step adds to a decision
// with a path target, in the hosts that see the tool's disk (gate eval, SDK, hook, local proxy).
// Same run, rounds interleaved; the baseline is evaluate() on the lexical path alone (the daemon).
//
// - lexical: evaluate() under the baseline low-risk denylist, no view
// - pathViewOf + evaluate: the whole edge step (normalize, realpath of the path, lstat for the link
//   count) and the evaluation with the view, a regular file with one link
// - ... hard-linked file: a file with two links under a policy denying `secrets/**` in the
//   workspace, so that root is searched for the same inode. (Under the baseline, whose roots
//   include `/root/**` and `/home/*/.ssh/*`, the search of a large home directory reaches its
//   bound and a hard-linked file fails closed: docs/canonical-targets.md "Links".)

import { linkSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { evaluate, nowUTC, parsePolicyYaml } from '../dist/index.js';
import { pathViewOf } from '../dist/decision/path-view.js';
import { readFileSync } from 'node:fs';

const policy = parsePolicyYaml(readFileSync(new URL('../policies/baseline-lowrisk.yaml', import.meta.url), 'utf8'));

const secrets = parsePolicyYaml(`schema_id: gait.gate.policy
schema_version: 1.0.0
default_verdict: allow
rules:
  - name: files
    effect: allow
    match: { target_kinds: [path] }
    endpoint: { path_denylist: ["secrets/**"] }
`);

const intentFor = (ws, file) => ({
  schema_id: 'gait.gate.intent_request',
  schema_version: '1.0.0',
  created_at: '2026-02-18T00:00:00Z',
  producer_version: 'bench',
  tool_name: 'fs.read',
  args: { path: file },
  targets: [{ kind: 'path', value: file, operation: 'read' }],
  arg_provenance: [{ arg_path: '$.path', source: 'user' }],
  context: { identity: 'alice', workspace: ws, risk_class: 'high', session_id: 's1' },
});

export default async function pathsBench(h) {
  const now = nowUTC();
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'ward-bench-paths-')));
  mkdirSync(join(ws, 'src'));
  writeFileSync(join(ws, 'src', 'main.ts'), 'export {};\n');
  writeFileSync(join(ws, 'src', 'linked.ts'), 'export {};\n');
  linkSync(join(ws, 'src', 'linked.ts'), join(ws, 'linked-copy.ts'));
  mkdirSync(join(ws, 'secrets'));
  for (let i = 0; i < 50; i++) writeFileSync(join(ws, 'secrets', `k${i}.pem`), 'x');
  const plain = intentFor(ws, 'src/main.ts');
  const linked = intentFor(ws, 'src/linked.ts');
  for (const [p, i] of [[policy, plain], [secrets, linked]]) {
    const view = pathViewOf([i], p.policy);
    if (!view || evaluate(p, i, { now, pathView: view }).verdict !== 'allow') throw new Error('the bench call must be allowed with a view');
  }
  await h.suite(
    'paths · a read of a workspace file under baseline-lowrisk',
    [
      ['lexical', () => evaluate(policy, plain, { now })],
      ['pathViewOf + evaluate', () => evaluate(policy, plain, { now, pathView: pathViewOf([plain], policy.policy) })],
      ['lexical, secrets/** policy', () => evaluate(secrets, linked, { now })],
      ['pathViewOf + evaluate, hard-linked file, secrets/** (50 files)', () => evaluate(secrets, linked, { now, pathView: pathViewOf([linked], secrets.policy) })],
    ],
    { baseline: 'lexical' },
  );
}
