// Canonical JSON and hashing: Ward's single-pass jcs() vs canonicalize@4 (the library it replaced,
// still the oracle in tests) vs JSON.stringify, and sha256 over 4 KB. JSON.stringify is the
// baseline: it is *not* canonical (no key sorting), it is only the floor for "serialize this
// object at all".

import { createHash, hash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { digestJcs, jcs, sha256Hex } from '../dist/index.js';
import { sha256Bytes } from '../dist/canon/index.js'; // internal: benches measure what ships, public or not

/** A trace-record-shaped object whose JCS form is exactly 894 bytes (checked below). */
export function traceRecord() {
  return {
    schema_id: 'gait.gate.trace',
    schema_version: '1.0.0',
    created_at: '2026-02-18T00:00:00Z',
    observed_at: '2026-11-21T21:11:28.455778037Z',
    producer_version: '0.1.0',
    trace_id: '98c069640be42974e73b8b6b',
    event_id: '5db2362d8eb9b75a9265737a',
    correlation_id: 'cli-7f3a9c2e1b',
    tool_name: 'tool.write',
    args_digest: '3ce5713f41f9b6812880cac570b0f8ce318c7afff371873f241884729e518370',
    intent_digest: '5a851409b8a555437e75559fdae924b969b53b3e9d5dce1806ac4e005ebd8d2b',
    policy_digest: 'a94ac865a8477f9a9552ea35524d820fccced3b73199d68d5661801050146666',
    agent_id: 'agent.scenario',
    policy_id: 'gait.gate.policy',
    policy_version: '1.0.0',
    verdict: 'block',
    context_set_digest: '793f36e5bd721ca7a293f211a10b3cb51f789445429848aaa16e0414eab8128f',
    context_evidence_mode: 'required',
    context_ref_count: 2,
    context_source: 'context_envelope',
    violations: ['context_freshness_violation'],
    latency_ms: 1.25,
  };
}

const EFFECTS = ['allow', 'block', 'require_approval', 'dry_run'];

/** A policy-shaped object, 5 levels deep, mixed scalar types and non-ASCII text: 4,085 JCS bytes. */
export function nestedObject() {
  return {
    schema_id: 'gait.gate.policy',
    schema_version: '1.0.0',
    description: 'example',
    default_verdict: 'block',
    rules: Array.from({ length: 12 }, (_, i) => ({
      name: `rule-${i}`,
      priority: 10 * i,
      effect: EFFECTS[i % 4],
      match: {
        tool_names: [`tool.${i}.read`, `tool.${i}.write`],
        risk_classes: ['critical', 'high'],
        endpoint: {
          egress_class: 'net.external',
          score: i / 7,
          limits: { requests: i * 3, window: 'minute', extra: { flags: [i, null, i % 2 === 0, 'ü€😀'] } },
        },
      },
      reason_codes: [`matched_rule_${i}`],
    })),
  };
}

function checkSize(label, value, expected) {
  const bytes = Buffer.byteLength(jcs(value));
  if (bytes !== expected) throw new Error(`${label}: JCS is ${bytes} bytes, expected ${expected}; fix the payload`);
  if (jcs(value) !== canonicalize(value)) throw new Error(`${label}: jcs() and canonicalize disagree`);
}

export default async function canonBench(h) {
  const trace = traceRecord();
  const nested = nestedObject();
  checkSize('trace record', trace, 894);
  checkSize('nested object', nested, 4085);

  await h.suite(
    'JCS · 894-byte trace record',
    [
      ['JSON.stringify', () => JSON.stringify(trace)],
      ['canonicalize@4.0.0 (raw)', () => canonicalize(trace)],
      ['ward jcs() (single pass)', () => jcs(trace)],
    ],
    { baseline: 'JSON.stringify' },
  );

  await h.suite(
    'JCS · 4 KB nested object (4,085 bytes)',
    [
      ['JSON.stringify', () => JSON.stringify(nested)],
      ['canonicalize@4.0.0 (raw)', () => canonicalize(nested)],
      ['ward jcs() (single pass)', () => jcs(nested)],
    ],
    { baseline: 'JSON.stringify' },
  );

  const data = Buffer.alloc(4096);
  for (let i = 0; i < data.length; i++) data[i] = (i * 131 + 7) & 0xff;
  const text = data.toString('hex').slice(0, 4096); // 4,096 ASCII characters = 4,096 UTF-8 bytes
  await h.suite(
    'SHA-256 · 4 KB',
    [
      ["createHash('sha256').update().digest()", () => createHash('sha256').update(data).digest()],
      ["crypto.hash('sha256', buf, 'hex')", () => hash('sha256', data, 'hex')],
      ['ward sha256Bytes(buf)', () => sha256Bytes(data)],
      ['ward sha256Hex(buf)', () => sha256Hex(data)],
      ['ward sha256Hex(4 KB ASCII string)', () => sha256Hex(text)],
    ],
    { baseline: "createHash('sha256').update().digest()" },
  );

  await h.suite(
    'digest · trace record (serialize + sha256 hex)',
    [
      ["sha256(JSON.stringify)", () => hash('sha256', JSON.stringify(trace), 'hex')],
      ['ward digestJcs()', () => digestJcs(trace)],
    ],
    { baseline: 'sha256(JSON.stringify)' },
  );
}
