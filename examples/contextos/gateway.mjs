// A stand-in for the ContextOS Tool Gateway: every ToolCallEnvelope goes to Ward's decision service
// (`ward mcp proxy --adapter contextos`, one call per process; `ward mcp serve --adapter contextos`
// is the same over HTTP) before any adapter runs. The gateway runs the adapter only on `allow`,
// answers with Ward's ToolResultEnvelope otherwise, and files a DecisionRecord built from Ward's
// signed trace. docs/contextos-and-context-state.md explains every field.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadKeyRing, verifyTraceFile } from 'ward';
import { decisionRecord } from './decision-record.mjs';

const here = (name) => fileURLToPath(new URL(name, import.meta.url));
const WARD = fileURLToPath(new URL('../../bin/ward.js', import.meta.url));
const stateDir = process.env.WARD_STATE_DIR || mkdtempSync(join(tmpdir(), 'ward-contextos-'));

/** Ward's decision for one envelope: exit 0 allow, 3 block, 4 require_approval, 6 a malformed envelope. */
function decide(envelope) {
  const r = spawnSync(
    process.execPath,
    [WARD, 'mcp', 'proxy', '--policy', here('policy.yaml'), '--adapter', 'contextos', '--call', '-', '--state-dir', stateDir, '--json'],
    { input: JSON.stringify(envelope), encoding: 'utf8' },
  );
  const decision = JSON.parse(r.stdout.trim().split('\n').pop());
  if (![0, 3, 4].includes(r.status) || !decision.trace_path) throw new Error(`ward refused the envelope (exit ${r.status}): ${decision.error}`);
  return decision;
}

for (const envelope of JSON.parse(readFileSync(here('calls.json'), 'utf8'))) {
  const decision = decide(envelope);
  // Fail closed: the gateway acts on a decision only once its trace verifies.
  const trace = verifyTraceFile(decision.trace_path, loadKeyRing(stateDir));
  if (!trace.ok) throw new Error(`trace ${decision.trace_path} does not verify: ${trace.error}`);
  const answer = decision.verdict === 'allow' ? 'run the adapter' : `ToolResultEnvelope ${decision.result_envelope.status}`;
  console.log(`${envelope.tool_call_id} ${envelope.capability_id}: ${decision.verdict} -> ${answer} (trace ${decision.trace_id} verified)`);
  const record = decisionRecord(envelope, JSON.parse(readFileSync(decision.trace_path, 'utf8')));
  console.log(`  DecisionRecord ${JSON.stringify(record)}`);
}
console.log(`signed traces: ${join(stateDir, 'traces')}`);
