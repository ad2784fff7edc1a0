import { formatRFC3339Nano, type GoTime, type JsonObject } from '../canon/index.js';
import { appendJsonLine } from './jsonl.js';

/** What one decision exports (`mcp-decision-service.md` §6.3 step 11). */
export interface DecisionExport {
  createdAt: GoTime;
  producerVersion: string;
  runId: string;
  sessionId: string;
  traceId: string;
  tracePath: string;
  toolName: string;
  verdict: string;
  reasonCodes: readonly string[];
  policyDigest: string;
  intentDigest: string;
  decisionLatencyMs: number;
  delegationRef: string;
  delegationDepth: number;
}

/** `--export-log-out`: one decision event per line. */
export function decisionLogEvent(e: DecisionExport): JsonObject {
  const out: JsonObject = {
    created_at: formatRFC3339Nano(e.createdAt),
    producer_version: e.producerVersion,
    run_id: e.runId,
  };
  if (e.sessionId) out['session_id'] = e.sessionId;
  out['trace_id'] = e.traceId;
  if (e.tracePath) out['trace_path'] = e.tracePath;
  out['tool_name'] = e.toolName;
  out['verdict'] = e.verdict;
  if (e.reasonCodes.length > 0) out['reason_codes'] = [...e.reasonCodes];
  out['policy_digest'] = e.policyDigest;
  out['intent_digest'] = e.intentDigest;
  if (e.decisionLatencyMs > 0) out['decision_latency_ms'] = e.decisionLatencyMs;
  if (e.delegationRef) out['delegation_ref'] = e.delegationRef;
  if (e.delegationDepth > 0) out['delegation_depth'] = e.delegationDepth;
  return out;
}

/**
 * `--export-otel-out`: an OpenTelemetry-style log record. `time_unix_nano` is an exact integer
 * (nanoseconds do not fit a JS number), so the line is assembled as text.
 */
export function otelLogLine(e: DecisionExport): string {
  const nanos = BigInt(e.createdAt.sec) * 1_000_000_000n + BigInt(e.createdAt.nsec);
  const record = {
    time_unix_nano: '\u0000NANOS\u0000',
    severity_text: 'INFO',
    body: 'gait.mcp.proxy.decision',
    trace_id: e.traceId,
    attributes: {
      'gait.run_id': e.runId,
      'gait.session_id': e.sessionId,
      'gait.trace_path': e.tracePath,
      'gait.tool_name': e.toolName,
      'gait.verdict': e.verdict,
      'gait.policy_digest': e.policyDigest,
      'gait.intent_digest': e.intentDigest,
      'gait.decision_latency_ms': e.decisionLatencyMs,
      'gait.delegation_ref': e.delegationRef,
      'gait.delegation_depth': e.delegationDepth,
      'gait.reason_codes': [...e.reasonCodes],
    },
  };
  return JSON.stringify(record).replace('"\\u0000NANOS\\u0000"', nanos.toString());
}

export function appendDecisionLog(path: string, e: DecisionExport): void {
  appendJsonLine(path, JSON.stringify(decisionLogEvent(e)));
}

export function appendOtelLog(path: string, e: DecisionExport): void {
  appendJsonLine(path, otelLogLine(e));
}
