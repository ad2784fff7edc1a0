import { digestJcs, type JsonObject } from '../canon/index.js';
import type { ContextEnvelope } from '../context/index.js';
import type { SigningKey } from '../keys/index.js';
import { buildRunPack } from '../pack/index.js';
import {
  INTENT_SCHEMA,
  REFS_SCHEMA,
  RESULT_SCHEMA,
  RUN_SCHEMA,
  recordRunpack,
  type RecordedRunpack,
  type RunRecordInput,
} from '../runpack/index.js';

/** What §6.3 step 9 records about one evaluated call. */
export interface DecisionRunInput {
  runId: string;
  /** The gate result's created_at (RFC3339Nano): every record's time. */
  createdAt: string;
  producerVersion: string;
  toolName: string;
  argsDigest: string;
  args: JsonObject;
  verdict: string;
  reasonCodes: readonly string[];
  violations: readonly string[];
  traceId: string;
  envelope: ContextEnvelope | undefined;
  signingKey: SigningKey;
}

/**
 * The one-intent runpack of a proxied decision: intent `intent_1`, a result
 * `{verdict, reason_codes, violations, trace_id}` with status `error` for block/require_approval
 * and `ok` otherwise, timeline `proxy_eval_start`/`proxy_eval_finish`, reference capture (args and
 * result are digested, then stripped). A bound context envelope becomes the run's receipts.
 */
export function decisionRunpack(d: DecisionRunInput): RecordedRunpack {
  const header = (schema: { id: string; version: string }) => ({
    schema_id: schema.id,
    schema_version: schema.version,
    created_at: d.createdAt,
    producer_version: d.producerVersion,
    run_id: d.runId,
  });
  const result: JsonObject = {
    verdict: d.verdict,
    reason_codes: [...d.reasonCodes],
    violations: [...d.violations],
    trace_id: d.traceId,
  };
  const input: RunRecordInput = {
    run: {
      ...header(RUN_SCHEMA),
      env: platformEnv(),
      timeline: [
        { event: 'proxy_eval_start', ts: d.createdAt },
        { event: 'proxy_eval_finish', ts: d.createdAt },
      ],
    },
    intents: [{ ...header(INTENT_SCHEMA), intent_id: 'intent_1', tool_name: d.toolName, args_digest: d.argsDigest, args: d.args }],
    results: [
      {
        ...header(RESULT_SCHEMA),
        intent_id: 'intent_1',
        status: d.verdict === 'block' || d.verdict === 'require_approval' ? 'error' : 'ok',
        result_digest: digestJcs(result),
        result,
      },
    ],
    refs: { ...header(REFS_SCHEMA), receipts: [] },
    captureMode: 'reference',
    intentArgs: new Map(),
    resultPayloads: new Map(),
  };
  return recordRunpack(input, {
    runId: d.runId,
    captureMode: 'reference',
    envelope: d.envelope,
    signingKey: d.signingKey,
    now: { sec: 0, nsec: 0, offset: 0 },
    env: platformEnv(),
  });
}

/** §6.3 step 10: a PackSpec run pack around the runpack, signed with the same key. */
export function decisionPack(runpack: Buffer, producerVersion: string, signingKey: SigningKey): { bytes: Buffer; packId: string } {
  const built = buildRunPack(runpack, { producerVersion, signingKey });
  return { bytes: built.bytes, packId: built.manifest.pack_id };
}

/** The reference writes GOOS/GOARCH; Ward writes the same names for the platform it runs on. */
function platformEnv(): { os: string; arch: string; runtime: string } {
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  const arch = ({ x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm' } as Record<string, string>)[process.arch] ?? process.arch;
  return { os, arch, runtime: 'node' };
}
