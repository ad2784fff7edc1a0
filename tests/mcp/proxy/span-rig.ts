// A real ProxySession and Gatekeeper between two in-process peers, with a DecisionTelemetry that
// records the spans the session opens and how they end: the rig of the proxy's span tests
// (refusal-spans.test.ts, server-request-spans.test.ts).
import { join } from 'node:path';
import { generateSigningKey } from '../../../src/keys/index.js';
import { parsePolicyYaml } from '../../../src/policy/index.js';
import { Gatekeeper } from '../../../src/mcp/proxy/gatekeeper.js';
import { DEFAULT_TARGET_MAPPING } from '../../../src/mcp/proxy/intent.js';
import { messageKind, type JsonRpcId, type JsonRpcMessage } from '../../../src/mcp/proxy/jsonrpc.js';
import { ProxyLog } from '../../../src/mcp/proxy/log.js';
import { ProxyMetrics } from '../../../src/mcp/proxy/metrics.js';
import { ProxySession } from '../../../src/mcp/proxy/session.js';
import type { DecisionRecord, RelayRecord } from '../../../src/telemetry/decision-record.js';
import type { DecisionTelemetry, OpenSpan, TraceCarrier } from '../../../src/telemetry/telemetry.js';
import { tempDir } from '../../cli/run.js';
import { RecordingPeer } from './helpers.js';

const key = generateSigningKey();
// Allow everything but `rm` (a decided block, which is not a refusal) and, from the server, sampling.
export const POLICY =
  'default_verdict: allow\nrules:\n  - { name: no-rm, priority: 10, effect: block, match: { tool_names: [rm] } }\n  - { name: no-sampling, priority: 10, effect: block, match: { tool_names: [mcp.sampling.create_message] } }\n';
export const PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

/** One span the session opened: a refusal's or relayed request's (`relay`), or a decided one's (`request`). */
export interface Opened {
  kind: 'relay' | 'request';
  relay?: RelayRecord;
  decision?: DecisionRecord;
  parent: TraceCarrier | undefined;
  ends: (number | string | undefined)[];
  /** What the session is given to put in a forwarded request's `_meta` (Ward's span, as a traceparent). */
  carrier: TraceCarrier;
}

/** A DecisionTelemetry that records the spans a session opens and how they end. */
export class RecordingTelemetry implements DecisionTelemetry {
  readonly opened: Opened[] = [];
  readonly includeTargets = false;
  private open(o: Omit<Opened, 'carrier'>): OpenSpan {
    const carrier = { traceparent: `00-0af7651916cd43dd8448eb211c80319c-${(this.opened.length + 1).toString(16).padStart(16, '0')}-01` };
    this.opened.push({ ...o, carrier });
    return { carrier, end: (error) => void o.ends.push(error) };
  }
  /** The closed spans recorded with `decision` (a decision on an answer or a result). */
  readonly decided: { record: DecisionRecord; parent: TraceCarrier | undefined }[] = [];
  decision(record: DecisionRecord, parent: TraceCarrier | undefined): TraceCarrier | undefined {
    this.decided.push({ record, parent });
    return undefined;
  }
  request(record: DecisionRecord, parent: TraceCarrier | undefined): OpenSpan {
    return this.open({ kind: 'request', decision: record, parent, ends: [] });
  }
  relay(record: RelayRecord, parent: TraceCarrier | undefined): OpenSpan {
    return this.open({ kind: 'relay', relay: record, parent, ends: [] });
  }
  exportMetrics(): void {}
  stats() {
    return { droppedSpans: 0, failedSpans: 0, droppedLogLines: 0, droppedLogRecords: 0, failedLogRecords: 0, failedMetricExports: 0 };
  }
  async shutdown(): Promise<void> {}
  /** The spans of requests with this JSON-RPC id. */
  of(id: JsonRpcId): Opened[] {
    return this.opened.filter((o) => (o.relay?.jsonRpcId ?? o.decision?.jsonRpcId) === String(id));
  }
  refusals(): Opened[] {
    return this.opened.filter((o) => o.relay?.refusal !== undefined);
  }
}

export interface Rig {
  session: ProxySession;
  client: RecordingPeer;
  server: RecordingPeer;
  gate: Gatekeeper;
  telemetry: RecordingTelemetry;
  metrics: ProxyMetrics;
  /** A message from the client. */
  send(msg: Omit<JsonRpcMessage, 'jsonrpc'>): void;
  /** A message from the MCP server. */
  fromServer(msg: Omit<JsonRpcMessage, 'jsonrpc'>): void;
  /** The answer the client got to its request `id`. */
  answer(id: JsonRpcId): Promise<JsonRpcMessage>;
}

/** `policy`: the policy's YAML (default `POLICY`). */
export async function rig(o: { unknownMethods?: 'refuse' | 'decide'; limits?: { maxBytes: number; maxKeys: number }; policy?: string } = {}): Promise<Rig> {
  const dir = tempDir('ward-span-rig-');
  const policy = parsePolicyYaml(o.policy ?? POLICY);
  const gate = new Gatekeeper({
    runtime: { policy, signingKey: key, traceFormat: 'ward', traceDir: dir, rateLimitStatePath: join(dir, 'rl.json'), profile: 'standard' },
    sink: { write: async () => 'mem', close: async () => undefined },
    mapping: { toolPrefix: '', targets: DEFAULT_TARGET_MAPPING, argSource: 'tool_output', workspace: dir, riskClass: 'high' },
    approvalDir: join(dir, 'approvals'),
    approvalKeys: [key],
  });
  const client = new RecordingPeer();
  const server = new RecordingPeer();
  const telemetry = new RecordingTelemetry();
  const metrics = new ProxyMetrics(() => telemetry.stats());
  const session = new ProxySession({
    client,
    server,
    gate,
    log: new ProxyLog(() => undefined, undefined, false),
    sessionId: 's',
    runId: 'mcp_s',
    denyAs: 'result',
    approvalDir: join(dir, 'approvals'),
    callTimeoutMs: 0,
    pinTools: false,
    hideBlockedTools: false,
    routeRelated: false,
    telemetry,
    metrics,
    unknownMethods: o.unknownMethods ? { mode: o.unknownMethods, riskClass: 'critical' } : undefined,
    limits: o.limits,
  });
  await session.start();
  const deliver = (peer: RecordingPeer, msg: Omit<JsonRpcMessage, 'jsonrpc'>) => {
    const full = { jsonrpc: '2.0', ...msg } as JsonRpcMessage;
    peer.onmessage!({ msg: full, kind: messageKind(full)!, raw: Buffer.from(JSON.stringify(full)) });
  };
  return {
    session,
    client,
    server,
    gate,
    telemetry,
    metrics,
    send: (msg) => deliver(client, msg),
    fromServer: (msg) => deliver(server, msg),
    answer: (id) => client.next((m) => m.id === id && m.method === undefined),
  };
}
