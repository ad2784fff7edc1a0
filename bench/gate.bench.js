// The gate engine on the reference's typical workload (gate.md §9 / issue 2): in-process
// evaluate() against the same policy with 2, 10, 100, 1,000 and 10,000 rules, the cost of digesting and
// signing a decision, and the whole-process wall time of `ward gate eval --json`, of
// `ward hook claude-code` on one PreToolUse event and of `ward --version` (issue 17: ≤ 1.5× bare node).
// Baselines: normalizeIntent() alone for the engine (so the ratio is what policy evaluation adds),
// raw crypto.sign for signing, and `node -e 0` for the process.

import { spawnSync } from 'node:child_process';
import { sign } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  digestJcs,
  evaluate,
  generateSigningKey,
  intentDigest,
  argsDigest,
  normalizeIntent,
  nowUTC,
  parsePolicyYaml,
} from '../dist/index.js';
import { buildTraceRecord, signTrace } from '../dist/trace/index.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const policyText = readFileSync(path.join(repo, 'fixtures/policies/bench-typical.yaml'), 'utf8');

/** The typical intent: tool.write to /tmp/out.txt, high risk, user provenance. */
export const intent = {
  schema_id: 'gait.gate.intent_request',
  schema_version: '1.0.0',
  created_at: '2026-02-18T00:00:00Z',
  producer_version: 'bench',
  tool_name: 'tool.write',
  args: { path: '/tmp/out.txt', content: 'hello' },
  targets: [{ kind: 'path', value: '/tmp/out.txt', operation: 'write' }],
  arg_provenance: [{ arg_path: '$.path', source: 'user' }],
  context: { identity: 'alice', workspace: '/tmp/work', risk_class: 'high', session_id: 's1' },
};

/** The typical policy plus `extra` rules that match other tools and are checked first. */
function policyWithRules(extra) {
  const rules = Array.from(
    { length: extra },
    (_, i) => `  - name: other-${String(i).padStart(4, '0')}
    priority: 5
    effect: block
    match: { tool_names: [tool.other${i}], target_kinds: [path] }
`,
  ).join('');
  return parsePolicyYaml(policyText.replace('rules:\n', `rules:\n${rules}`));
}

export default async function gateBench(h) {
  const now = nowUTC();
  const typical = parsePolicyYaml(policyText);
  const check = evaluate(typical, intent, { now });
  if (check.verdict !== 'allow' || check.matchedRule !== 'allow-safe-write') {
    throw new Error(`typical workload must allow via allow-safe-write, got ${check.verdict}`);
  }
  const sized = [8, 98, 998, 9998].map((n) => [n + 2, policyWithRules(n)]);
  for (const [, p] of sized) if (evaluate(p, intent, { now }).verdict !== 'allow') throw new Error('sized policy must allow');

  await h.suite(
    'gate · in-process evaluate (typical workload, gate.md §9)',
    [
      ['normalizeIntent only', () => normalizeIntent(intent)],
      ['evaluate · 2 rules (typical)', () => evaluate(typical, intent, { now })],
      ...sized.map(([n, p]) => [`evaluate · ${n} rules`, () => evaluate(p, intent, { now })]),
    ],
    { baseline: 'normalizeIntent only' },
  );

  const key = generateSigningKey();
  const outcome = evaluate(typical, intent, { now });
  const prepared = outcome.preparedIntent;
  const record = () =>
    buildTraceRecord(
      {
        intent: prepared,
        argsDigest: argsDigest(prepared),
        intentDigest: intentDigest(prepared),
        policyDigest: typical.digest,
        policyId: 'gait.gate.policy',
        policyVersion: '1.0.0',
        verdict: outcome.verdict,
        reasonCodes: outcome.reasonCodes,
        violations: outcome.violations,
        matchedRule: outcome.matchedRule,
        createdAt: now,
        observedAt: nowUTC(),
        producerVersion: 'bench',
        latencyMs: 0.01,
      },
      'ward',
    );
  const unsigned = record();
  const digestBytes = Buffer.from(digestJcs(unsigned), 'hex');
  await h.suite(
    'gate · decision evidence (per decision)',
    [
      ['raw crypto.sign of 32 bytes', () => sign(null, digestBytes, key.privateKey)],
      ['intent_digest of the prepared intent', () => intentDigest(prepared)],
      ['build trace record (digests included)', () => record()],
      ['build + sign trace (JCS + sha256 + Ed25519)', () => signTrace(record(), key)],
      ['evaluate + build + sign', () => {
        evaluate(typical, intent, { now });
        return signTrace(record(), key);
      }],
    ],
    { baseline: 'raw crypto.sign of 32 bytes' },
  );

  const ward = path.join(repo, 'bin', 'ward.js');
  const intentFile = path.join(repo, 'fixtures', 'intents', 'v1-approval-valid.json');
  const policyFile = path.join(repo, 'fixtures', 'policies', 'bench-typical.yaml');
  const hookPolicy = path.join(repo, 'fixtures', 'claude-code', 'policy.yaml');
  const hookEvent = readFileSync(path.join(repo, 'fixtures', 'claude-code', 'pre-read.json'));
  // A fresh directory with its own .ward/ (key and traces there, found as the nearest .ward/).
  const cwd = mkdtempSync(path.join(tmpdir(), 'ward-bench-'));
  mkdirSync(path.join(cwd, '.ward'));
  // bin/ward.js runs gate, hook and --version from dist/cli/fast-*.cjs, unless a bundle is missing
  // or older than a dist/ file it was built from (then the unbundled CLI, slower): say which is measured.
  const cli = path.join(repo, 'dist', 'cli');
  const stale = ['fast-gate', 'fast-hook', 'fast-version'].filter((name) => {
    const built = statSync(path.join(cli, `${name}.cjs`), { throwIfNoEntry: false })?.mtimeMs;
    const inputs = statSync(path.join(cli, `${name}.cjs.inputs`), { throwIfNoEntry: false })
      ? readFileSync(path.join(cli, `${name}.cjs.inputs`), 'utf8').split('\n').filter(Boolean)
      : [];
    return built === undefined || inputs.length === 0 || inputs.some((f) => (statSync(path.join(cli, f), { throwIfNoEntry: false })?.mtimeMs ?? Infinity) > built);
  });
  if (stale.length) console.error(`note: ${stale.join(', ')} missing or older than its dist/ files: measuring the unbundled CLI (npm run build makes them)`);
  const run = (args, input, ok, dir = () => cwd) => () => {
    const r = spawnSync(process.execPath, [ward, ...args], { cwd: dir(), input });
    if (!ok.includes(r.status)) throw new Error(`ward ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    return r;
  };
  // The reference's typical workload (gate.md §9: the intent above, allowed by allow-safe-write),
  // and the same in a new directory with an empty .ward/ each time: the first decision there also
  // creates the signing key (generated, written and fsynced once per state directory).
  const typicalFile = path.join(cwd, 'typical-intent.json');
  writeFileSync(typicalFile, JSON.stringify(intent));
  const fresh = () => {
    const dir = mkdtempSync(path.join(cwd, 'fresh-'));
    mkdirSync(path.join(dir, '.ward'));
    return dir;
  };
  const typicalArgs = ['gate', 'eval', '--policy', policyFile, '--intent', typicalFile, '--json'];
  await h.suite(
    'gate · whole process: `ward gate eval --json`, `ward hook claude-code`, `ward --version`',
    [
      ['node -e 0', () => spawnSync(process.execPath, ['-e', '0'])],
      // require_approval: exit 4
      ['ward gate eval --json', run(['gate', 'eval', '--policy', policyFile, '--intent', intentFile, '--json'], undefined, [4])],
      // allow: exit 0
      ['ward gate eval --json (typical workload)', run(typicalArgs, undefined, [0])],
      ['ward gate eval --json (typical, fresh .ward/)', run(typicalArgs, undefined, [0], fresh)],
      // a PreToolUse Read the policy allows: exit 0 with the JSON answer
      ['ward hook claude-code (PreToolUse)', run(['hook', 'claude-code', '--policy', hookPolicy], hookEvent, [0])],
      ['ward --version', run(['--version'], undefined, [0])],
    ],
    { baseline: 'node -e 0', rounds: 5, roundMs: 400, minIterations: 2, warmupMs: 300, alloc: false },
  );
  rmSync(cwd, { recursive: true, force: true });
}
