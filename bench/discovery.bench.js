// What target discovery (src/intent/discover.ts, issue 26) costs: in-process evaluate() of the
// reference's typical workload (gate.bench.js) and of an MCP-shaped call with nested arguments,
// each with discovery on (as shipped) and off (the internal benchmark switch), interleaved in one
// run. The ratio is what finding targets in the arguments adds to a decision.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { evaluate, nowUTC, parsePolicyYaml } from '../dist/index.js';
import { setTargetDiscoveryForBenchmark } from '../dist/intent/discover.js';
import { intent as typical } from './gate.bench.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const policy = parsePolicyYaml(readFileSync(path.join(repo, 'fixtures/policies/bench-typical.yaml'), 'utf8'));

/** An MCP call as the hook sends it: several files, nested options, free text, no declared targets. */
const nested = {
  ...typical,
  tool_name: 'tool.mcp__filesystem__read_multiple_files',
  args: {
    paths: ['/tmp/work/a.txt', '/tmp/work/b.txt', 'src/c.ts', 'docs/d.md'],
    options: { encoding: 'utf8', follow: false, root: '/tmp/work', filters: [{ glob: '*.ts', exclude: ['node_modules'] }] },
    note: 'read these files and summarize them for the release notes',
    limit: 20,
  },
  targets: [],
};

export default async function discoveryBench(h) {
  const now = nowUTC();
  const at = (on, intent) => () => {
    setTargetDiscoveryForBenchmark(on);
    return evaluate(policy, intent, { now });
  };
  for (const intent of [typical, nested]) {
    const off = at(false, intent)();
    const on = at(true, intent)();
    if (off.verdict === undefined || on.verdict === undefined) throw new Error('no verdict');
  }
  try {
    await h.suite(
      'intent · target discovery on the typical workload (issue 26)',
      [
        ['evaluate · typical, discovery off', at(false, typical)],
        ['evaluate · typical, discovery on', at(true, typical)],
      ],
      { baseline: 'evaluate · typical, discovery off' },
    );
    await h.suite(
      'intent · target discovery on an MCP call with nested arguments',
      [
        ['evaluate · nested, discovery off', at(false, nested)],
        ['evaluate · nested, discovery on', at(true, nested)],
      ],
      { baseline: 'evaluate · nested, discovery off' },
    );
  } finally {
    setTargetDiscoveryForBenchmark(true);
  }
}
