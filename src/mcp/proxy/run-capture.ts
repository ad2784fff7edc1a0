import { arch, platform } from 'node:os';
import { digestJcs, formatRFC3339Nano, nowUTC, type GoTime } from '../../canon/index.js';
import type { ContextEnvelope } from '../../context/index.js';
import type { SigningKey } from '../../keys/index.js';
import { parseRunRecordInput, recordRunpack } from '../../runpack/index.js';
import { spoolBytes } from '../../store/spool.js';
import { WARD_VERSION } from '../../version.js';

interface CallEntry {
  intentId: string;
  toolName: string;
  argsDigest: string;
  /** When the call was recorded; formatted when the runpack is built (off the call path). */
  at: GoTime;
  traceId: string;
  verdict: string;
  status?: string;
  resultDigest?: string;
}

/** Payload bytes that may wait for their digest at once (a payload of unknown size counts as `UNKNOWN_BYTES`). */
const WAITING_BYTES = 4 * 1024 * 1024;
const UNKNOWN_BYTES = 64 * 1024;
/** A payload at least this large is digested at once: deferring it would only hold its memory. */
const LARGE_BYTES = 1024 * 1024;
/** How long a result may wait for its digest. */
const DIGEST_DELAY_MS = 50;

/**
 * One MCP session captured as a run (mcp.md): each `tools/call` is an intent (args digest), each
 * reply a result (digest of the CallToolResult, or of the reply Ward sent instead), in reference
 * capture mode (digests only). At the end of the session the signed runpack is spooled for the store,
 * so `pack build`, `pack diff` and `regress` work on proxied traffic.
 *
 * Result digests (JCS + SHA-256 of the payload) are computed in batches off the call path: a
 * digest made right after each reply competed for the CPU with the client and the server of the
 * next call (on two cores, about a tenth of a millisecond of every proxied call at p50). A batch
 * runs after `DIGEST_DELAY_MS`, or at once when the waiting payloads reach `WAITING_BYTES`, so
 * the memory held stays bounded; `build` digests whatever still waits.
 */
export class RunCapture {
  private readonly calls: CallEntry[] = [];
  private readonly byId = new Map<string, CallEntry>();
  private seq = 0;
  private waiting: { entry: CallEntry; payload: unknown }[] = [];
  private waitingBytes = 0;
  private digestTimer: NodeJS.Timeout | undefined;
  readonly createdAt = formatRFC3339Nano(nowUTC());

  constructor(readonly runId: string) {}

  /** Record a decided call; returns its intent id. */
  call(toolName: string, argsDigest: string, traceId: string, verdict: string): string {
    const intentId = `intent_${String(++this.seq).padStart(6, '0')}`;
    const e: CallEntry = { intentId, toolName, argsDigest, at: nowUTC(), traceId, verdict };
    this.calls.push(e);
    this.byId.set(intentId, e);
    return intentId;
  }

  /**
   * Record the reply the client got. `payload` is the result or error object (not modified
   * afterwards by the caller); it is digested in the next batch. `bytes`: its encoded size when
   * known (the line received over stdio).
   */
  result(intentId: string, status: string, payload: unknown, bytes?: number): void {
    const e = this.byId.get(intentId);
    if (!e || e.status) return;
    e.status = status;
    const size = bytes ?? UNKNOWN_BYTES;
    if (size >= LARGE_BYTES) {
      e.resultDigest = resultDigest(payload);
      return;
    }
    this.waiting.push({ entry: e, payload });
    this.waitingBytes += size;
    if (this.waitingBytes >= WAITING_BYTES) this.digestWaiting();
    else if (!this.digestTimer) {
      this.digestTimer = setTimeout(() => this.digestWaiting(), DIGEST_DELAY_MS);
      this.digestTimer.unref();
    }
  }

  /** Digest every result that waits for it. */
  private digestWaiting(): void {
    if (this.digestTimer) clearTimeout(this.digestTimer);
    this.digestTimer = undefined;
    const batch = this.waiting;
    this.waiting = [];
    this.waitingBytes = 0;
    for (const { entry, payload } of batch) entry.resultDigest = resultDigest(payload);
  }

  get size(): number {
    return this.calls.length;
  }

  /** Build the signed runpack, or undefined when the session made no calls. */
  build(signingKey: SigningKey, envelope: ContextEnvelope | undefined): Buffer | undefined {
    this.digestWaiting();
    if (this.calls.length === 0) return undefined;
    const at = new Map(this.calls.map((c) => [c, formatRFC3339Nano(c.at)]));
    const lost = digestJcs({ status: 'no_reply' });
    const record = {
      run: {
        run_id: this.runId,
        created_at: this.createdAt,
        producer_version: WARD_VERSION,
        env: { os: platform(), arch: arch(), runtime: `node ${process.versions.node}` },
        timeline: [
          { event: 'run_started', ts: this.createdAt },
          ...this.calls.map((c) => ({ event: 'tool_call', ts: at.get(c)!, ref: c.intentId })),
        ],
      },
      intents: this.calls.map((c) => ({ intent_id: c.intentId, tool_name: c.toolName, args_digest: c.argsDigest, created_at: at.get(c)! })),
      results: this.calls.map((c) => ({
        intent_id: c.intentId,
        status: c.status ?? 'no_reply',
        result_digest: c.resultDigest ?? lost,
        created_at: at.get(c)!,
      })),
      refs: {},
      capture_mode: 'reference',
    };
    const input = parseRunRecordInput(JSON.stringify(record));
    const recorded = recordRunpack(input, {
      now: nowUTC(),
      env: { os: platform(), arch: arch(), runtime: 'node' },
      signingKey,
      ...(envelope ? { envelope } : {}),
    });
    return recorded.bytes;
  }

  /** Spool the runpack for the store; returns the spool path (undefined when there was nothing). */
  spool(stateDir: string, signingKey: SigningKey, envelope: ContextEnvelope | undefined): string | undefined {
    const bytes = this.build(signingKey, envelope);
    return bytes ? spoolBytes(stateDir, 'runpack', bytes) : undefined;
  }
}

function resultDigest(payload: unknown): string {
  try {
    return digestJcs(payload ?? null);
  } catch {
    return digestJcs({ undigestable: true });
  }
}
