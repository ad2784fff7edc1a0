// Regress: `ward regress run` over 100 fixtures (whole process, against `ward --version` and
// `ward verify` of one runpack in the same run, plus the in-process grading), and policy replay
// over 10,000 captured intents against raw `evaluate` of the same intents.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseRFC3339, formatRFC3339Nano, addSeconds } from '../dist/canon/index.js';
import { evaluate } from '../dist/gate/evaluate.js';
import { normalizedIntentJson } from '../dist/intent/digest.js';
import { normalizeIntent } from '../dist/intent/normalize.js';
import { loadPolicyFile } from '../dist/policy/load.js';
import { initFixture, readRegressConfig, recordFromCapture, replayPolicy, runRegress } from '../dist/regress/index.js';
import { parseRunRecordInput, recordRunpack } from '../dist/runpack/index.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ward = path.join(repo, 'bin', 'ward.js');
const FIXTURES = 100;
const INTENTS = 10_000;

export default async function regressBench(h) {
  if (h.matches('regress', ['regress run', 'regress replay'])) {
    await regressRun(h);
    await regressReplay(h);
  }
}

async function regressRun(h) {
  const cwd = mkdtempSync(path.join(tmpdir(), 'ward-bench-regress-'));
  try {
    const input = readFileSync(path.join(repo, 'fixtures', 'runs', 'run_record_demo.json'), 'utf8');
    const now = parseRFC3339('2026-03-01T00:00:00Z');
    const env = { os: 'linux', arch: 'amd64', runtime: 'node' };
    const configPath = path.join(cwd, 'ward.yaml');
    let firstRunpack = '';
    for (let i = 0; i < FIXTURES; i++) {
      const runId = `run_bench_${String(i).padStart(3, '0')}`;
      const bytes = recordRunpack(parseRunRecordInput(input), { runId, now, env }).bytes;
      if (i === 0) {
        firstRunpack = path.join(cwd, 'first.zip');
        writeFileSync(firstRunpack, bytes);
      }
      initFixture({ cwd, runpackBytes: bytes, sourceLabel: runId, configPath });
    }
    const config = readRegressConfig(configPath, 'ward.yaml');
    const flags = { contextConformance: false, allowContextRuntimeDrift: false };
    const check = runRegress(config, { cwd, flags, producerVersion: 'bench' });
    if (check.status !== 'pass' || check.graders.length !== FIXTURES * 4) throw new Error('regress bench: fixtures do not pass');

    await h.suite(
      `regress run · in process, ${FIXTURES} fixtures × 4 graders (fixtures/s = ${FIXTURES} / (µs/op) × 1e6)`,
      [[`runRegress(${FIXTURES} fixtures)`, () => runRegress(config, { cwd, flags, producerVersion: 'bench' })]],
      { rounds: 5, roundMs: 400, minIterations: 2, alloc: false },
    );
    await h.suite(
      `regress run · whole process, ${FIXTURES} fixtures (reference budget: p50 2 s per process)`,
      [
        ['ward --version', () => spawnSync(process.execPath, [ward, '--version'], { cwd })],
        ['ward verify <one runpack>', () => spawnSync(process.execPath, [ward, 'verify', firstRunpack], { cwd })],
        [`ward regress run --junit (${FIXTURES} fixtures)`, () => {
          const r = spawnSync(process.execPath, [ward, 'regress', 'run', '--junit', 'junit.xml', '--json'], { cwd });
          if (r.status !== 0) throw new Error(`regress run exited ${r.status}: ${r.stdout}${r.stderr}`);
        }],
      ],
      { baseline: 'ward --version', rounds: 5, roundMs: 1500, minIterations: 2, warmupMs: 500, alloc: false },
    );
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

async function regressReplay(h) {
  const highrisk = loadPolicyFile(path.join(repo, 'policies', 'baseline-highrisk.yaml'));
  const candidate = loadPolicyFile(path.join(repo, 'policies', 'baseline-mediumrisk.yaml'));
  const base = ['read-report', 'delete-database', 'write-config'].map((n) =>
    JSON.parse(readFileSync(path.join(repo, 'examples', 'quickstart', `${n}.json`), 'utf8')),
  );
  const start = parseRFC3339('2026-11-21T09:00:00Z');
  // 10,000 distinct captured decisions: the quickstart intents with varied paths and times.
  const captures = [];
  const raws = [];
  for (let i = 0; i < INTENTS; i++) {
    const raw = structuredClone(base[i % base.length]);
    raw.args = { ...raw.args, path: `/workspace/file_${i}.md` };
    raw.targets = raw.targets.map((t) => ({ ...t, value: `/workspace/file_${i}.md` }));
    const time = addSeconds(start, i);
    const outcome = evaluate(highrisk, raw, { now: time });
    const id = i.toString(16).padStart(24, '0');
    captures.push(
      JSON.stringify({
        schema_id: 'ward.decision_capture',
        schema_version: '1.0.0',
        trace_id: id,
        event_id: id,
        evaluation_time: formatRFC3339Nano(time),
        policy_digest: highrisk.digest,
        intent_digest: 'b'.repeat(64),
        tool_name: raw.tool_name,
        verdict: outcome.verdict,
        reason_codes: outcome.reasonCodes,
        matched_rule: outcome.matchedRule,
        intent: normalizedIntentJson(normalizeIntent(raw)),
      }),
    );
    raws.push({ raw, time });
  }
  const records = captures.map((c, i) => recordFromCapture(c, `capture_${i}.json`));
  const input = { records, not_replayable: [] };
  const report = replayPolicy(input, { candidate });
  console.error(`regress replay: ${INTENTS.toLocaleString('en')} decisions, ${report.summary.loosened} loosened, ${report.summary.tightened} tightened, ${report.summary.reasons_changed} reason changes under baseline-mediumrisk`);

  await h.suite(
    `regress replay · ${INTENTS.toLocaleString('en')} captured intents (intents/s = ${INTENTS} / (µs/op) × 1e6)`,
    [
      [`raw evaluate × ${INTENTS}`, () => {
        let n = 0;
        for (const { raw, time } of raws) if (evaluate(candidate, raw, { now: time }).verdict === 'allow') n++;
        return n;
      }],
      [`replayPolicy(${INTENTS} records): evaluate, compare, group`, () => replayPolicy(input, { candidate })],
      [`replayPolicy with --baseline-policy (2 evaluations each)`, () => replayPolicy(input, { candidate, baseline: highrisk })],
      [`parse ${INTENTS} capture files (parseDecisionCapture)`, () => captures.map((c, i) => recordFromCapture(c, `capture_${i}.json`))],
    ],
    { baseline: `raw evaluate × ${INTENTS}`, rounds: 5, roundMs: 1000, minIterations: 2, alloc: false },
  );
}
