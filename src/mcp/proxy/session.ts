import { randomBytes } from 'node:crypto';
import { formatRFC3339Nano, isJsonObject, nowUTC, type JsonObject, foldSpelling } from '../../canon/index.js';
import {
  declaresFormElicitation,
  ELICIT_DEFAULT_TIMEOUT_MS,
  ELICIT_ID_PREFIX,
  elicitOutcome,
  elicitParams,
  outcomeNote,
  retireElicitedApproval,
  writeElicitedApproval,
  type ApprovalMode,
  type ElicitOutcome,
} from './elicit.js';
import { awaitInboxApproval, inboxNote, writeInboxTokens, type InboxConfig, type InboxOutcome } from './approval-inbox.js';
import type { CallDecision, DecideOptions, Gatekeeper, ResultTrace } from './gatekeeper.js';
import { hintsOf, intentToolName, type CallInput, type ToolHints } from './intent.js';
import { errorResponse, idKey, isToolCallMethod, resultResponse, RPC, type JsonRpcId, type JsonRpcMessage } from './jsonrpc.js';
import type { ProxyLog } from './log.js';
import type { Inbound, Peer } from './peer.js';
import { wardObject, verdictReply, type DenyAs } from './replies.js';
import type { RunCapture } from './run-capture.js';
import { serverKey, type PinStore } from './pins.js';
import { isModernProtocolVersion, requestClientName, requestProtocolVersion, resultServerInfo, shapeResult } from './protocol.js';
import { blockedText, screenResult, type Screened } from './result-firewall.js';
import { alwaysBlocked, ToolPins } from './tools.js';
import { checkRequest, DEFAULT_REQUEST_LIMITS, type RequestLimits } from './limits.js';
import { DecisionThreadError } from './decision-thread.js';
import { isReservedToolName, knownNotification, requestRoute, ROOTS_ANSWER, SERVER_NOTIFICATION, UNKNOWN_METHOD, type MethodIntent, type Sender, type UnknownMethods } from './methods.js';
import { toolSuspicion, type SessionWitness } from './witness.js';
import { NO_SPAN, preciseNow, type DecisionTelemetry, type OpenSpan, type TraceCarrier } from '../../telemetry/telemetry.js';
import type { ProxyMetrics } from './metrics.js';
import { mcpDecisionRecord, mcpResultRecord, mcpTraceCarrier, spanRpcId, withTraceContext } from '../../telemetry/mcp-record.js';
import { metaOf, refusalSpan, type Refused } from './refusals.js';
import { OTHER_METHOD, ROOTS_ANSWER_OPERATION, SERVER_TO_CLIENT, type DecisionRecord } from '../../telemetry/decision-record.js';

export interface SessionOptions {
  client: Peer;
  server: Peer;
  gate: Gatekeeper;
  log: ProxyLog;
  sessionId: string;
  runId: string;
  denyAs: DenyAs;
  approvalDir: string;
  /** `--approval`: tokens from the approval directory only, or also ask the user inline (MCP elicitation). */
  approvalMode?: ApprovalMode | undefined;
  /** With `approvalMode: 'inbox'`: the daemon calls that need approval are reported to. */
  inbox?: InboxConfig | undefined;
  /** Milliseconds a forwarded request may take before the client gets an error (0: no limit). */
  callTimeoutMs: number;
  pinTools: boolean;
  /** With `pinTools`: where pins persist per server, and how Ward reaches the server (part of its key). */
  pins?: { store: PinStore; upstream: string[] | string } | undefined;
  hideBlockedTools: boolean;
  /** Streamable HTTP toward the client: server-initiated messages must name the request they belong to. */
  routeRelated: boolean;
  capture?: RunCapture | undefined;
  /** What Ward witnessed in this session (docs/witness.md); undefined with `--no-witness`. */
  witness?: SessionWitness | undefined;
  /** `--unknown-methods` and `--unknown-method-risk-class`: what happens to a method Ward does not know (default: refused). */
  unknownMethods?: { mode: UnknownMethods; riskClass: string } | undefined;
  /** `--max-call-bytes` / `--max-call-keys` (default `DEFAULT_REQUEST_LIMITS`). */
  limits?: RequestLimits | undefined;
  /** `--otel` / `--decision-log` (docs/observability.md): a span and a log line per decided `tools/call`. */
  telemetry?: DecisionTelemetry | undefined;
  /** With `--otel`: the proxy's counters (decisions, result firewall, witness). */
  metrics?: ProxyMetrics | undefined;
}

interface Pending {
  id: JsonRpcId;
  method: string;
  timer?: NodeJS.Timeout | undefined;
  progressToken?: string | number | undefined;
  call?: ForwardedCall | undefined;
}

/** An allowed `tools/call` (or other decided method) forwarded to the server, waiting for its result. */
interface ForwardedCall {
  /** The JSON-RPC method (`tools/call`, `resources/read`, ...): a result Ward blocks is an error unless it is a tool result. */
  method: string;
  decision: CallDecision;
  intentId: string | undefined;
  input: CallInput;
  correlation: string;
  /** Sent under a 2026-07-28+ revision (Ward's own replies then carry `resultType`). */
  modern: boolean;
  /** Ward's span for the request (`--otel`): the parent of the result firewall's span. */
  traceContext?: TraceCarrier | undefined;
}

/** One of Ward's own `elicitation/create` requests to the client, waiting for the answer. */
/** A call's decision, and Ward's note for the client when it was blocked before policy or refused. */
type Decided = { decision: CallDecision; note?: { text: string; ward: Record<string, unknown> } };

interface Elicitation {
  callId: JsonRpcId;
  timer: NodeJS.Timeout;
  answer: (o: ElicitOutcome) => void;
}

export interface SessionEnd {
  /** Why the session ended abnormally (the server died, a transport failed); undefined when orderly. */
  error?: Error | undefined;
}

/**
 * One MCP session through Ward: raw JSON-RPC messages are forwarded both ways unchanged, except
 * `tools/call` (decided by the gate; only allowed calls reach the server) and, for pinning and
 * hiding, `tools/list` results.
 */
export class ProxySession {
  readonly done: Promise<SessionEnd>;
  private resolveDone!: (end: SessionEnd) => void;
  private readonly pending = new Map<string, Pending>();
  /** Client request ids from arrival until the client gets their answer: a second request with one of them is refused. */
  private readonly inflight = new Set<string>();
  /** `--otel`: the spans of client requests not yet answered, by id (`spanOpened`). */
  private readonly spans = new Map<string, OpenSpan>();
  /** `--otel`: the spans of server requests the server has not had its answer to, by the server's id (their own id space). */
  private readonly serverSpans = new Map<string, OpenSpan>();
  /** Requests the server sent the client (forwarded), by id: only their answers go back to the server. */
  private readonly serverRequests = new Map<string, { method: string; id: JsonRpcId }>();
  private readonly abandoned = new Set<string>();
  /** Allowed calls whose trace the sink has not accepted yet: not forwarded until it has. */
  private readonly deciding = new Map<string, { cancelled: boolean }>();
  private notificationSeq = 0;
  private readonly progress = new Map<string | number, JsonRpcId>();
  private readonly hints = new Map<string, ToolHints>();
  /** Tool names the server listed, and each folded spelling → the first listed name with it. */
  private readonly listed = new Set<string>();
  private readonly listedByFold = new Map<string, string>();
  private readonly pins = new ToolPins((err, tool) =>
    this.o.log.error('tool pins could not be read or written; calls to the tool are blocked until this is fixed', { tool, error: err.message }),
  );
  private clientName = '';
  /** The server's `serverInfo.name` (its witnessed context records name it), `unknown` until initialize says. */
  private serverName = 'unknown';
  /** The version `initialize` negotiated (2025 revisions); modern requests name theirs in `_meta`. */
  private negotiatedVersion: string | undefined;
  private clientElicits = false;
  private readonly elicitations = new Map<string, Elicitation>();
  private readonly elicitPrefix = `${ELICIT_ID_PREFIX}${randomBytes(4).toString('hex')}-`;
  /** Keys the result firewall's finding digests (they never leave the session). */
  private readonly digestKey = randomBytes(32);
  private elicitSeq = 0;
  /** Calls held while a daemon's approvals inbox decides (keyed by request id): aborting ends the wait. */
  private readonly inboxWaits = new Map<string, AbortController>();
  private ended = false;
  private serverGone: Error | undefined;
  /** When a message last went through the session (either way), for idle expiry. */
  private lastActivity = Date.now();
  /** Client messages that came while a call of this session was decided off the event loop (`decideCallOffLoop`). */
  private held: Inbound[] | undefined;

  constructor(private readonly o: SessionOptions) {
    this.done = new Promise((r) => (this.resolveDone = r));
    o.client.onmessage = (m) => this.fromClient(m);
    o.server.onmessage = (m) => this.fromServer(m);
    o.client.onmalformed = (reason, id, oversize) => this.malformedFromClient(reason, id, oversize);
    o.server.onmalformed = (reason, id, oversize) => this.malformedFromServer(reason, id, oversize);
    o.client.onclose = (error) => void this.end(error, 'client');
    o.server.onclose = (error) => this.serverClosed(error);
  }

  get id(): string {
    return this.o.sessionId;
  }

  /** Count as activity now (a client request on the session's HTTP endpoint, say). */
  touch(): void {
    this.lastActivity = Date.now();
  }

  /**
   * Since when the session has been idle (epoch ms): the last message either way. Undefined while
   * a request is in flight (forwarded, waiting for its trace, or waiting for an approval): a long
   * call is not idle; `--call-timeout` bounds one the server never answers.
   */
  idleSince(): number | undefined {
    if (this.ended || this.held || this.pending.size > 0 || this.deciding.size > 0 || this.elicitations.size > 0 || this.inboxWaits.size > 0) return undefined;
    return this.lastActivity;
  }

  /**
   * The ids of the requests in an HTTP POST body (one message or a batch) that are still in flight
   * in this session. The listener refuses such a POST before the SDK transport sees it: the
   * transport keys its response streams by request id, so a second request with a live id would
   * take the first one's stream and leave that client waiting forever.
   */
  reusedRequestIds(body: unknown): JsonRpcId[] {
    const out: JsonRpcId[] = [];
    for (const m of Array.isArray(body) ? body : [body]) {
      if (!isJsonObject(m) || typeof m['method'] !== 'string') continue;
      const id = m['id'];
      if ((typeof id === 'string' || typeof id === 'number') && this.inflight.has(idKey(id))) out.push(id);
    }
    return out;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** Start the server side first (so early client messages have somewhere to go), then the client side. */
  async start(): Promise<void> {
    await this.o.server.start();
    await this.o.client.start();
  }

  // ---- client → server ------------------------------------------------------------------------

  private fromClient(m: Inbound): void {
    this.lastActivity = Date.now();
    // A call of this session is being decided off the event loop: what the client sent after it
    // waits, so the session handles its messages in the order they came (as inline decisions do).
    if (this.held) {
      this.held.push(m);
      return;
    }
    this.handleClient(m);
  }

  private handleClient(m: Inbound): void {
    const msg = m.msg;
    let offLoop = false;
    if (m.kind === 'request') {
      // One answer per id: a request reusing the id of one still in flight (a tools/call id 7, then
      // a ping id 7) would let the call's result be taken for the ping's, unscreened.
      const key = idKey(msg.id as JsonRpcId);
      if (this.inflight.has(key)) return this.refuseReusedId(msg);
      // Over a bound, nothing of it is read as an intent: deciding it would stall every session.
      const { over, offLoop: large } = checkRequest(msg.params, m.raw?.length, this.o.limits ?? DEFAULT_REQUEST_LIMITS);
      if (over) {
        this.o.log.warn('request over a limit refused; not forwarded', { method: JSON.stringify(msg.method), id: msg.id, why: over });
        this.refusedSpan({ cause: 'limit_exceeded', id: msg.id, method: msg.method, meta: metaOf(msg.params) });
        return this.replyError(msg.id as JsonRpcId, RPC.LIMIT_EXCEEDED, over);
      }
      this.inflight.add(key);
      offLoop = large;
    }
    if (m.kind === 'request' && isModernProtocolVersion(requestProtocolVersion(msg.params))) {
      // 2026-07-28+: no initialize; every request names its client in `_meta`. (A 2025-revision
      // session keeps the name its initialize gave.)
      const name = requestClientName(msg.params);
      if (name !== undefined) this.clientName = name;
    }
    if (m.kind !== 'response' && isToolCallMethod(msg.method!)) {
      // Every tool call in any spelling is decided or refused; nothing reaches the server undecided.
      if (m.kind === 'notification') return this.refuseNotification(msg);
      if (msg.method !== 'tools/call') return this.refuseMisspelled(msg, msg.id as JsonRpcId);
      return this.handleCall(msg, msg.id as JsonRpcId, m.raw, offLoop);
    }
    if (m.kind === 'request') {
      const id = msg.id as JsonRpcId;
      const route = requestRoute('client', msg.method!);
      if (route.kind === 'intent') return this.handleMethod(msg, id, m.raw, route.intent, offLoop);
      if (route.kind !== 'plumbing') return this.handleUnknown(msg, id, m.raw, 'client');
      if (msg.method === 'initialize') {
        const info = msg.params?.['clientInfo'];
        if (isJsonObject(info) && typeof info['name'] === 'string') this.clientName = info['name'];
        this.clientElicits = declaresFormElicitation(msg.params?.['capabilities']);
      }
      if (this.serverGone && this.o.telemetry) {
        // Nothing to relay it to: refused (forward answers it), with a refusal's span rather than a relay's.
        this.refusedSpan({ cause: 'server_unavailable', id, method: msg.method, meta: metaOf(msg.params) });
        return this.forward({ id, method: msg.method! }, msg, m.raw);
      }
      // A span for the relayed request too (`--otel`); the server's spans become its children.
      const relayed = this.relaySpan(msg, id, 'client');
      if (relayed?.traceparent) return this.forward({ id, method: msg.method! }, withTraceContext(msg, relayed), undefined);
      this.forward({ id, method: msg.method! }, msg, m.raw);
      return;
    }
    if (m.kind === 'notification' && !knownNotification('client', msg.method!)) return this.handleUnknown(msg, undefined, m.raw, 'client');
    if (m.kind === 'response' && typeof msg.id === 'string' && msg.id.startsWith(this.elicitPrefix)) {
      // The answer to Ward's own elicitation: consumed here, never forwarded to the server (a late
      // answer, after a timeout or a cancel, is dropped).
      const e = this.elicitations.get(msg.id);
      if (!e) {
        this.o.log.debug('late answer to an approval request dropped', { id: msg.id });
        return;
      }
      this.elicitations.delete(msg.id);
      clearTimeout(e.timer);
      e.answer(elicitOutcome(msg));
      return;
    }
    if (m.kind === 'response') return this.answerToServer(msg, m.raw);
    if (m.kind === 'notification' && msg.method === 'notifications/cancelled') {
      const rid = msg.params?.['requestId'];
      if (typeof rid === 'string' || typeof rid === 'number') {
        // A cancelled request gets no answer: its id is free again, and its span ends here.
        this.inflight.delete(idKey(rid));
        this.endSpan(idKey(rid), 'cancelled');
        this.dropElicitations(rid);
        const waiting = this.deciding.get(idKey(rid));
        if (waiting) {
          // The call was never forwarded (its trace is still being accepted): it never will be,
          // and the server, which never saw it, does not need the cancellation either.
          waiting.cancelled = true;
          return;
        }
        const p = this.pending.get(idKey(rid));
        if (p) {
          this.settle(p);
          if (p.call?.intentId) this.o.capture?.result(p.call.intentId, 'cancelled', msg.params ?? null);
        }
      }
    }
    // Known notifications pass through as they are.
    this.toServer(msg, m.raw);
  }

  private forward(p: Pending, msg: JsonRpcMessage, raw: Buffer | undefined): void {
    if (this.serverGone) {
      this.replyError(p.id, RPC.UPSTREAM_UNAVAILABLE, `MCP server is not available: ${this.serverGone.message}`);
      return;
    }
    const key = idKey(p.id);
    const meta = msg.params?.['_meta'];
    if (isJsonObject(meta)) {
      const token = meta['progressToken'];
      if (typeof token === 'string' || typeof token === 'number') {
        p.progressToken = token;
        this.progress.set(token, p.id);
      }
    }
    if (this.o.callTimeoutMs > 0) {
      p.timer = setTimeout(() => this.timedOut(key), this.o.callTimeoutMs);
      p.timer.unref?.();
    }
    this.pending.set(key, p);
    this.o.server.send(msg, raw).catch((err: Error) => {
      if (!this.pending.has(key)) return;
      this.settle(p);
      this.replyError(p.id, RPC.UPSTREAM_UNAVAILABLE, `MCP server unreachable: ${err.message}`);
    });
  }

  private handleCall(msg: JsonRpcMessage, id: JsonRpcId, raw: Buffer | undefined, offLoop = false): void {
    const params = msg.params ?? {};
    const name = params['name'];
    const args = params['arguments'] ?? {};
    if (typeof name !== 'string' || name === '' || !isJsonObject(args)) {
      return this.refuseWithError(msg, id, -32602, 'tools/call needs params.name (a string) and params.arguments (an object)', 'invalid_params');
    }
    const call = this.callInput(name, args, params['_meta']);
    if (this.o.witness) {
      call.witnessed = this.o.witness.argumentSources(args);
      if (call.witnessed) this.o.log.debug('arguments carry values of earlier tool results', { tool: name, from: Object.fromEntries(call.witnessed) });
      call.witnessedContext = this.o.witness.contextFor(this.o.gate.runtime.policy.policy, intentToolName(this.o.gate.mapping.toolPrefix, name));
    }
    const correlation = `${this.o.sessionId}:${String(id)}`;
    const alias = this.listedAlias(name);
    if (alias !== undefined) return this.answerCall(msg, id, raw, call, correlation, alias);
    this.withResolvedHosts(call, msg, () => this.answerCall(msg, id, raw, call, correlation, alias, offLoop));
  }

  /**
   * Run `then` once the call's host names are resolved into `call.resolvedHosts` — at once when the
   * policy's domain lists need no resolution (the common case stays synchronous).
   */
  private withResolvedHosts(call: CallInput, msg: JsonRpcMessage, then: () => void): void {
    const resolving = this.o.gate.resolveHosts(call);
    if (!resolving) return then();
    const id = msg.id as JsonRpcId;
    resolving.then(
      (resolved) => {
        call.resolvedHosts = resolved;
        then();
      },
      (err: Error) => {
        this.refusedSpan({ cause: 'hosts_unresolved', id, method: msg.method, meta: call.meta });
        this.replyError(id, RPC.INTERNAL_ERROR, `Ward could not resolve this request's hosts (${err.message}); it was not forwarded`);
      },
    );
  }

  /**
   * Decide a call (its hosts resolved when the policy needs them) and forward it or answer the
   * client. `offLoop`: a large call (limits.ts `OFF_LOOP_THRESHOLD`), decided on the decision
   * thread when the host has one.
   */
  private answerCall(msg: JsonRpcMessage, id: JsonRpcId, raw: Buffer | undefined, call: CallInput, correlation: string, alias: string | undefined, offLoop = false): void {
    const startedAt = preciseNow();
    const reserved = isReservedToolName(intentToolName(this.o.gate.mapping.toolPrefix, call.name));
    if (offLoop && !reserved && alias === undefined && this.o.gate.offLoop) {
      return this.decideCallOffLoop(call, correlation, id, (decided) => this.answerDecided(msg, id, raw, call, correlation, alias, reserved, startedAt, decided));
    }
    const decided = reserved ? this.refuseReserved(call, correlation) : alias === undefined ? this.decideCall(call, correlation) : this.refuseAlias(call, correlation, alias);
    this.answerDecided(msg, id, raw, call, correlation, alias, reserved, startedAt, decided);
  }

  private answerDecided(
    msg: JsonRpcMessage,
    id: JsonRpcId,
    raw: Buffer | undefined,
    call: CallInput,
    correlation: string,
    alias: string | undefined,
    reserved: boolean,
    startedAt: number,
    decided: { decision: CallDecision; note?: { text: string; ward: Record<string, unknown> } } | undefined,
  ): void {
    const name = call.name;
    if (!decided) {
      this.refusedSpan({ cause: 'not_signed', id, method: msg.method, meta: call.meta });
      return this.replyError(id, RPC.INTERNAL_ERROR, 'Ward could not decide or trace this call; it was not forwarded');
    }
    const { decision, note } = decided;
    // Ward's span, child of the client's `_meta.traceparent`; the server's spans become its children.
    const traceContext = this.traced(decision, id, correlation, 'tools/call', call, startedAt);
    const intentId = this.o.capture?.call(decision.toolName, decision.argsDigest, decision.traceId, decision.verdict);
    if (decision.verdict === 'allow') {
      if (traceContext?.traceparent) return this.forwardDecided(id, withTraceContext(msg, traceContext), undefined, decision, intentId, call, correlation, traceContext);
      return this.forwardDecided(id, msg, raw, decision, intentId, call, correlation);
    }
    this.o.log.info(`${decision.verdict}: ${name}`, { reasons: decision.reasonCodes.join(','), trace_id: decision.traceId });
    if (this.approvesInteractively(decision) && (this.o.approvalMode === 'elicit' || (alias === undefined && !reserved))) {
      return this.approveInteractively(msg, raw, id, call, correlation, decision, intentId);
    }
    const reply = verdictReply(id, decision, this.o.denyAs, this.o.approvalDir, note ?? this.changedToolNote(decision, name), { modern: this.isModern(msg) });
    this.replyOnceTraced(id, decision, intentId, reply);
  }

  /** Ward's own answer to a request it did not forward: sent once the decision's trace is written, never before. */
  private replyOnceTraced(id: JsonRpcId, decision: CallDecision, intentId: string | undefined, reply: JsonRpcMessage, to: Sender = 'client'): void {
    decision.durable.then(
      () => {
        if (intentId) this.o.capture?.result(intentId, decision.verdict, reply.result ?? reply.error);
        if (to === 'client') this.toClient(reply);
        else this.toServer(reply);
      },
      (err: Error) => {
        if (to === 'client') return this.traceFailed(id, err, intentId);
        this.o.log.error('decision trace could not be written; reply withheld', { error: err.message });
        this.toServer(errorResponse(id, RPC.INTERNAL_ERROR, `Ward could not persist the decision trace: ${err.message}`));
      },
    );
  }

  /**
   * A method other than `tools/call` that reads or acts (`resources/read`, `prompts/get`, ...):
   * decided like a tool call under its intent name (docs/mcp-proxy.md "Every method that reads or
   * acts"), forwarded only when allowed and traced, its result screened and witnessed like a tool
   * result. Anything but allow is a JSON-RPC error (`-32060`, the `ward` object in `error.data`):
   * these methods have no result shape that says "blocked". `--approval elicit` and `inbox` ask a
   * person as for a tool call (the question names the method, its targets and argument digest).
   */
  private handleMethod(msg: JsonRpcMessage, id: JsonRpcId, raw: Buffer | undefined, intent: MethodIntent, offLoop: boolean): void {
    const call = this.methodCall(msg.method!, msg.params, intent);
    this.withResolvedHosts(call, msg, () => this.answerMethod(msg, id, raw, call, offLoop));
  }

  /** Decide a method request and forward it or answer the client; `offLoop` as for `answerCall`. */
  private answerMethod(msg: JsonRpcMessage, id: JsonRpcId, raw: Buffer | undefined, call: CallInput, offLoop: boolean): void {
    const startedAt = preciseNow();
    const correlation = `${this.o.sessionId}:${String(id)}`;
    if (offLoop && this.o.gate.offLoop) {
      return this.holdWhileDeciding(call, correlation, id, (o) => this.answerMethodDecided(msg, id, raw, call, correlation, startedAt, 'decision' in o ? o.decision : this.methodRefusal(call, correlation, o.error)));
    }
    this.answerMethodDecided(msg, id, raw, call, correlation, startedAt, this.decideMethod(call, correlation));
  }

  private answerMethodDecided(msg: JsonRpcMessage, id: JsonRpcId, raw: Buffer | undefined, call: CallInput, correlation: string, startedAt: number, decision: CallDecision | undefined): void {
    if (!decision) {
      this.refusedSpan({ cause: 'not_signed', id, method: msg.method, meta: call.meta });
      return this.replyError(id, RPC.INTERNAL_ERROR, 'Ward could not decide or trace this request; it was not forwarded');
    }
    const traceContext = this.traced(decision, id, correlation, msg.method!, call, startedAt);
    const intentId = this.o.capture?.call(decision.toolName, decision.argsDigest, decision.traceId, decision.verdict);
    if (decision.verdict === 'allow') {
      if (traceContext?.traceparent) return this.forwardDecided(id, withTraceContext(msg, traceContext), undefined, decision, intentId, call, correlation, traceContext);
      return this.forwardDecided(id, msg, raw, decision, intentId, call, correlation);
    }
    this.o.log.info(`${decision.verdict}: ${msg.method!}`, { intent: decision.toolName, reasons: decision.reasonCodes.join(','), trace_id: decision.traceId });
    if (this.approvesInteractively(decision)) return this.approveInteractively(msg, raw, id, call, correlation, decision, intentId);
    this.replyOnceTraced(id, decision, intentId, verdictReply(id, decision, 'error', this.o.approvalDir, undefined, { modern: this.isModern(msg) }));
  }

  /**
   * Ward's span and log record for a decided request (`--otel`, `--decision-log`); its context for
   * the forwarded request. `from`: who sent the request (a server's goes on to the client).
   */
  private traced(decision: CallDecision, id: JsonRpcId, correlation: string, method: string, call: CallInput, startedAt: number, from: Sender = 'client'): TraceCarrier | undefined {
    const t = this.o.telemetry;
    if (!t) return undefined;
    return this.spanOpened(id, t.request(this.decisionRecord(t, decision, id, correlation, method, call, startedAt, from), mcpTraceCarrier(call.meta), startedAt), from);
  }

  /** A decision's telemetry record, the decision counted (`ward_decisions_total`, ...). */
  private decisionRecord(t: DecisionTelemetry, decision: CallDecision, id: JsonRpcId, correlation: string, method: string, call: CallInput, startedAt: number, from: Sender): DecisionRecord {
    this.o.metrics?.decided(decision.verdict, decision.reasonCodes, (preciseNow() - startedAt) / 1000, (call.witnessed?.size ?? 0) > 0);
    const context = { witnessed: call.witnessed, witnessOn: this.o.witness !== undefined, targets: t.includeTargets ? decision.targets : undefined, direction: from === 'server' ? SERVER_TO_CLIENT : undefined };
    return mcpDecisionRecord(decision, this.o.sessionId, id, correlation, method, context);
  }

  /**
   * A request's span, open until its answer is handed to its sender — a client request's to the
   * client (`toClient`), a server request's to the server (`toServer`) — it is cancelled, or the
   * session ends: every request ends one of these ways, so every span ends, once. Returns its
   * context for the forwarded request.
   */
  private spanOpened(id: JsonRpcId, span: OpenSpan, from: Sender = 'client'): TraceCarrier | undefined {
    if (span === NO_SPAN) return undefined;
    const key = idKey(id);
    const spans = from === 'client' ? this.spans : this.serverSpans;
    // An id is in flight once (a reused one is refused); a stale span ends rather than leaks.
    spans.get(key)?.end('superseded');
    spans.set(key, span);
    return span.carrier;
  }

  /** `--otel`: the span of a request relayed without a decision, child of its `_meta.traceparent`; its context for the forwarded request. */
  private relaySpan(msg: JsonRpcMessage, id: JsonRpcId, from: Sender): TraceCarrier | undefined {
    const t = this.o.telemetry;
    if (!t) return undefined;
    const record = { method: msg.method!, mcpSessionId: this.o.sessionId, jsonRpcId: spanRpcId(id), direction: from === 'server' ? SERVER_TO_CLIENT : undefined };
    return this.spanOpened(id, t.relay(record, mcpTraceCarrier(metaOf(msg.params))), from);
  }

  private endSpan(key: string, error?: number | string, from: Sender = 'client'): void {
    const spans = from === 'client' ? this.spans : this.serverSpans;
    const span = spans.get(key);
    if (!span) return;
    spans.delete(key);
    span.end(error);
  }

  /**
   * `--otel`: the span of a request Ward refuses itself, before any policy decision (refusals.ts),
   * and, a client's, its count (`ward_mcp_refusals_total`). With `code`, the refusal is answered at
   * once, outside `toClient` / `toServer`, and its span ends here; without, the request is in
   * flight and its answer (`toClient`, or `toServer` for a server's) ends it, as any request's —
   * after its refusal's trace is written, cancelled, or with its session.
   */
  private refusedSpan(r: Refused, code?: number): void {
    // `ward_mcp_refusals_total` counts the client's requests: a server's refusals are spans only.
    if (r.from !== 'server') this.o.metrics?.refused(r.cause);
    const t = this.o.telemetry;
    if (!t) return;
    const span = refusalSpan(t, this.o.sessionId, r);
    if (code !== undefined || r.id === undefined || r.id === null) return span.end(code);
    this.spanOpened(r.id, span, r.from);
  }

  /**
   * The HTTP listener refused these requests of a POST to this session before the session saw
   * them (a reused id, over a limit, unreadable): their refusals' spans, ended with `code`.
   */
  listenerRefused(cause: 'id_reused' | 'limit_exceeded' | 'malformed', requests: readonly { id?: JsonRpcId | null; method?: unknown; params?: unknown }[], code: number): void {
    if (!this.o.telemetry && !this.o.metrics) return;
    for (const r of requests) this.refusedSpan({ cause, id: r.id, method: r.method, meta: metaOf(r.params) }, code);
  }

  /** The intent input of a method request: its params (less `_meta`) are the arguments, its targets the method's. */
  private methodCall(method: string, payload: unknown, intent: MethodIntent, riskClass?: string): CallInput {
    const params = isJsonObject(payload) ? payload : {};
    const { _meta: meta, ...args } = params;
    const targets = intent === UNKNOWN_METHOD || intent === SERVER_NOTIFICATION ? [{ kind: 'other', value: method }] : intent.targets(params);
    const call = this.callInput(method, args, meta);
    const inner = intent.discoverIn === undefined ? undefined : params[intent.discoverIn];
    call.method = { intentName: intent.tool, operation: intent.operation, targets, riskClass, discoverArgs: isJsonObject(inner) ? inner : undefined };
    if (this.o.witness) call.witnessed = this.o.witness.argumentSources(args);
    return call;
  }

  /** `Gatekeeper.decide`, or the traced refusal when the request cannot be evaluated; undefined when not even that could be signed. */
  private decideMethod(call: CallInput, correlation: string, opts: DecideOptions = {}): CallDecision | undefined {
    try {
      return this.o.gate.decide(call, correlation, opts);
    } catch (err) {
      return this.methodRefusal(call, correlation, err);
    }
  }

  private methodRefusal(call: CallInput, correlation: string, err: unknown): CallDecision | undefined {
    this.o.log.warn('request not evaluable; refused, not forwarded', { method: call.name, error: (err as Error).message.slice(0, 240) });
    return this.refusal(call, correlation);
  }

  /**
   * A method Ward does not know, from either side. `--unknown-methods refuse` (the default): a
   * request is answered with `-32601` and a notification dropped, both traced as refusals
   * (`fail_closed_intent_invalid`), nothing forwarded. `decide`: decided as `mcp.method` with the
   * method as its target and `--unknown-method-risk-class` as its risk class.
   */
  private handleUnknown(msg: JsonRpcMessage, id: JsonRpcId | undefined, raw: Buffer | undefined, from: Sender): void {
    const method = msg.method!;
    const mode = this.o.unknownMethods ?? { mode: 'refuse', riskClass: 'critical' };
    const call = this.methodCall(method, msg.params, UNKNOWN_METHOD, mode.riskClass);
    const correlation = `${this.o.sessionId}:${from === 'server' ? 'server:' : ''}${id === undefined ? `notification-${++this.notificationSeq}` : String(id)}`;
    const startedAt = preciseNow();
    const decision = mode.mode === 'decide' ? this.decideMethod(call, correlation) : this.refusal(call, correlation);
    // A request decided under `--unknown-methods decide` has a decided request's span, its method
    // (the agent's or the server's own text) named `_OTHER`.
    const traceContext = id !== undefined && mode.mode === 'decide' && decision ? this.traced(decision, id, correlation, OTHER_METHOD, call, startedAt, from) : undefined;
    if (decision?.verdict === 'allow') {
      if (from === 'server') return this.relayServerRequest(msg, raw, id, traceContext, { decision, call, correlation });
      if (id !== undefined) {
        const intentId = this.o.capture?.call(decision.toolName, decision.argsDigest, decision.traceId, decision.verdict);
        if (traceContext?.traceparent) return this.forwardDecided(id, withTraceContext(msg, traceContext), undefined, decision, intentId, call, correlation, traceContext);
        return this.forwardDecided(id, msg, raw, decision, intentId, call, correlation);
      }
      decision.durable.then(
        () => this.toServer(msg, raw),
        (err: Error) => this.o.log.error('decision trace could not be written; notification dropped', { method, error: err.message }),
      );
      return;
    }
    this.o.log.warn(`${from === 'client' ? 'client' : 'MCP server'} sent a method Ward does not know; ${id === undefined ? 'dropped' : 'refused'}, not forwarded`, { method: JSON.stringify(method), trace_id: decision?.traceId });
    if (id === undefined) return;
    // A refusal (not a decision) has a refusal's span; a decided unknown method that was not allowed is a decision.
    if (mode.mode === 'refuse' || !decision) {
      this.refusedSpan({ cause: mode.mode === 'refuse' ? 'method_unknown' : 'not_signed', id, method, meta: call.meta, trace: decision, from });
    }
    const text = mode.mode === 'refuse' ? `Ward refused this request: it does not know the method ${JSON.stringify(method)} (--unknown-methods refuse); it was not forwarded.` : undefined;
    if (!decision) return from === 'client' ? this.replyError(id, RPC.METHOD_NOT_FOUND, text ?? 'not forwarded') : this.toServer(errorResponse(id, RPC.METHOD_NOT_FOUND, text ?? 'not forwarded'));
    const reply = text === undefined ? verdictReply(id, decision, 'error', this.o.approvalDir) : errorResponse(id, RPC.METHOD_NOT_FOUND, text, { ward: wardObject(decision, { refused: 'method_unknown', method }) });
    this.replyOnceTraced(id, decision, undefined, reply, from === 'client' ? 'client' : 'server');
  }

  /**
   * A request reusing the id of one still in flight: refused at once, forwarded nowhere (the first
   * keeps its id, and its span: the refusal's span ends here).
   */
  private refuseReusedId(msg: JsonRpcMessage): void {
    const id = msg.id as JsonRpcId;
    this.o.log.warn('request reuses the id of a request still in flight; refused, not forwarded', { id, method: JSON.stringify(msg.method) });
    this.refusedSpan({ cause: 'id_reused', id, method: msg.method, meta: metaOf(msg.params) }, RPC.INVALID_REQUEST);
    this.o.client
      .send(errorResponse(id, RPC.INVALID_REQUEST, `Invalid Request: id ${JSON.stringify(id)} is already in use by a request Ward has not answered yet; use a new id`))
      .catch((err: Error) => this.o.log.debug('could not deliver to the client', { error: err.message }));
  }

  /** A tool whose intent name is one of the method scheme's (`mcp.resource.read`...): a policy rule for the method must not govern it. */
  private refuseReserved(call: CallInput, correlation: string): { decision: CallDecision; note: { text: string; ward: Record<string, unknown> } } | undefined {
    this.o.log.warn('tools/call names a tool whose intent name is reserved for MCP methods; refused, not forwarded', { tool: JSON.stringify(call.name) });
    const decision = this.refusal(call, correlation);
    if (!decision) return undefined;
    return { decision, note: { text: `The tool name ${JSON.stringify(call.name)} is reserved for an MCP method in Ward's policy names; it was not forwarded.`, ward: { refused: 'tool_name_reserved' } } };
  }

  /** Was this request sent under a 2026-07-28+ revision (its own `_meta`, else what initialize negotiated)? */
  private isModern(msg: JsonRpcMessage): boolean {
    return isModernProtocolVersion(requestProtocolVersion(msg.params) ?? this.negotiatedVersion);
  }

  private callInput(name: string, args: JsonObject, meta: unknown): CallInput {
    return {
      name,
      arguments: args,
      sessionId: this.o.sessionId,
      runId: this.o.runId,
      clientName: this.clientName,
      hints: this.hints.get(name),
      meta: isJsonObject(meta) ? meta : undefined,
      createdAt: formatRFC3339Nano(nowUTC()),
    };
  }

  /**
   * The decision for one call: by policy, or blocked for a changed pinned tool, or — when the call
   * cannot be evaluated or its trace cannot be signed (1e400, nesting deeper than JCS allows) — a
   * traced refusal (`fail_closed_intent_invalid`). Undefined only when not even the refusal could
   * be signed; the caller must then answer with an error and forward nothing.
   */
  private decideCall(call: CallInput, correlation: string, opts: DecideOptions = {}): Decided | undefined {
    try {
      return this.blockedBeforePolicy(call, correlation) ?? { decision: this.o.gate.decide(call, correlation, opts) };
    } catch (err) {
      return this.notEvaluable(call, correlation, err);
    }
  }

  /**
   * `decideCall` with the policy decision made on the decision thread (`Gatekeeper.decideOffLoop`).
   * Until `then` has run, the session holds the client's later messages (`fromClient`), so they
   * are handled after this call, as they would be inline. A thread that could not answer decided
   * nothing: the client gets an error and nothing is forwarded.
   */
  private decideCallOffLoop(call: CallInput, correlation: string, id: JsonRpcId, then: (decided: Decided | undefined) => void): void {
    let blocked: Decided | undefined;
    try {
      blocked = this.blockedBeforePolicy(call, correlation);
    } catch (err) {
      return then(this.notEvaluable(call, correlation, err));
    }
    if (blocked) return then(blocked);
    this.holdWhileDeciding(call, correlation, id, (o) => then('decision' in o ? { decision: o.decision } : this.notEvaluable(call, correlation, o.error)));
  }

  /**
   * `Gatekeeper.decideOffLoop`, with the session's later client messages held until `then` has
   * run (`fromClient`). `then` gets the decision, or the error the decision threw (the caller
   * refuses the request as it would inline); a thread that could not answer decided nothing:
   * `fail` (the request id the client gets -32603 for, or what to do instead) and nothing is
   * forwarded.
   */
  private holdWhileDeciding(call: CallInput, correlation: string, fail: JsonRpcId | ((why: string) => void), then: (o: { decision: CallDecision } | { error: unknown }) => void): void {
    this.held = [];
    const after = (run: () => void) => {
      if (this.ended) {
        this.held = undefined;
        return;
      }
      try {
        run();
      } finally {
        this.releaseHeld();
      }
    };
    this.o.gate.decideOffLoop(call, correlation).then(
      (decision) => after(() => then({ decision })),
      (err: Error) =>
        after(() => {
          if (!(err instanceof DecisionThreadError)) return then({ error: err });
          this.o.log.error('request not decided; refused, not forwarded', { method: JSON.stringify(call.method?.intentName ?? 'tools/call'), tool: call.name, error: err.message });
          if (typeof fail === 'function') return fail(err.message);
          this.refusedSpan({ cause: 'decision_thread_failed', id: fail, method: call.method ? call.name : 'tools/call', meta: call.meta });
          this.replyError(fail, RPC.INTERNAL_ERROR, `Ward could not decide this request (${err.message}); it was not forwarded`);
        }),
    );
  }

  /** Handle the client messages held while a call was decided off the loop, in order, until one is decided off the loop again. */
  private releaseHeld(): void {
    const queue = this.held ?? [];
    this.held = undefined;
    while (queue.length && !this.held) this.handleClient(queue.shift()!);
    if (queue.length) this.held!.push(...queue);
  }

  /** A call to a tool whose pinned definition changed, or that is held for its definition: blocked before policy. */
  private blockedBeforePolicy(call: CallInput, correlation: string): Decided | undefined {
    const changed = this.o.pinTools && this.pins.isChanged(call.name);
    if (!changed && this.pinWarned.size) this.pinWarned.delete(call.name); // accepted: a later change warns again
    if (changed) return { decision: this.o.gate.blockChangedTool(call, correlation) };
    const held = this.heldFor(call.name);
    if (held) return { decision: this.o.gate.blockChangedTool(call, correlation, held), note: this.heldToolNote(call.name) };
    return undefined;
  }

  /** A call that cannot be evaluated or signed: the traced refusal, or undefined when not even that could be signed. */
  private notEvaluable(call: CallInput, correlation: string, err: unknown): Decided | undefined {
    const message = (err as Error).message;
    const why = message.length > 240 ? `${message.slice(0, 240)}…` : message;
    this.o.log.warn('tools/call not evaluable; refused, not forwarded', { tool: call.name, error: why });
    const decision = this.refusal(call, correlation);
    if (!decision) return undefined;
    return { decision, note: { text: `Ward could not evaluate this call: ${why}`, ward: { refused: 'not_evaluable', detail: why } } };
  }

  /**
   * The listed tool that `name` spells differently (`Write_File`, `write_file `, full-width
   * letters), when the server listed one and not `name` itself. Pins, annotations and per-tool
   * target maps are keyed by the listed name, so a server that resolved tool names leniently could
   * run that tool without them: such a call is refused.
   */
  private listedAlias(name: string): string | undefined {
    if (this.listed.size === 0 || this.listed.has(name)) return undefined;
    return this.listedByFold.get(foldSpelling(name));
  }

  private refuseAlias(call: CallInput, correlation: string, alias: string): { decision: CallDecision; note: { text: string; ward: Record<string, unknown> } } | undefined {
    this.o.log.warn('tools/call names a listed tool in another spelling; refused, not forwarded', { tool: JSON.stringify(call.name), listed: alias });
    const decision = this.refusal(call, correlation);
    if (!decision) return undefined;
    return {
      decision,
      note: { text: `The tool name ${JSON.stringify(call.name)} is not exactly the listed tool ${JSON.stringify(alias)}; call it by its listed name.`, ward: { refused: 'tool_name_not_listed', listed_name: alias } },
    };
  }

  /** `Gatekeeper.refuse`, or undefined (logged) when even that fails. */
  private refusal(call: CallInput, correlation: string): CallDecision | undefined {
    try {
      return this.o.gate.refuse(call, correlation);
    } catch (err) {
      this.o.log.error('could not sign the refusal of a tool call; it was not forwarded', { tool: call.name, error: (err as Error).message });
      return undefined;
    }
  }

  /**
   * An allowed call reaches the server only once its decision is final and the trace sink has
   * accepted its trace. A cancellation that arrives meanwhile means it is never forwarded.
   */
  private forwardDecided(
    id: JsonRpcId,
    msg: JsonRpcMessage,
    raw: Buffer | undefined,
    decision: CallDecision,
    intentId: string | undefined,
    input: CallInput,
    correlation: string,
    traceContext?: TraceCarrier,
  ): void {
    const key = idKey(id);
    const waiting = { cancelled: false };
    this.deciding.set(key, waiting);
    const done = () => {
      if (this.deciding.get(key) === waiting) this.deciding.delete(key);
    };
    decision.durable.then(
      () => {
        done();
        if (waiting.cancelled || this.ended) {
          if (intentId) this.o.capture?.result(intentId, 'cancelled', { message: 'cancelled before it was forwarded' });
          return;
        }
        this.forward({ id, method: msg.method!, call: { method: msg.method!, decision, intentId, input, correlation, modern: this.isModern(msg), traceContext } }, msg, raw);
      },
      (err: Error) => {
        done();
        this.traceFailed(id, err, intentId);
      },
    );
  }

  /** The tool call a message names, for a refusal's trace (whatever shape its params have). */
  private refusedCall(msg: JsonRpcMessage): CallInput {
    const params = isJsonObject(msg.params) ? msg.params : {};
    const name = typeof params['name'] === 'string' && params['name'] !== '' ? params['name'] : 'unknown';
    const args = isJsonObject(params['arguments']) ? params['arguments'] : {};
    return this.callInput(name, args, params['_meta']);
  }

  /**
   * A request whose method is a tool call spelled other than exactly `tools/call` (`Tools/Call`,
   * `tools/call `, full-width letters...): refused with a JSON-RPC error, traced, never forwarded.
   */
  private refuseMisspelled(msg: JsonRpcMessage, id: JsonRpcId): void {
    const method = msg.method!;
    this.o.log.warn('tool call with a non-canonical method refused; not forwarded', { method: JSON.stringify(method) });
    const message = `Ward refused this request: its method ${JSON.stringify(method)} is not exactly "tools/call". Tool calls must use that exact method; this one was not forwarded.`;
    this.refuseWithError(msg, id, RPC.METHOD_NOT_FOUND, message, 'method_not_canonical', { method });
  }

  /** A tool-call request refused with a JSON-RPC error (the `ward` object in `error.data`), after its refusal is traced. */
  private refuseWithError(msg: JsonRpcMessage, id: JsonRpcId, code: number, message: string, refused: 'invalid_params' | 'method_not_canonical', extra: Record<string, unknown> = {}): void {
    const call = this.refusedCall(msg);
    const d = this.refusal(call, `${this.o.sessionId}:${String(id)}`);
    this.refusedSpan({ cause: refused, id, method: msg.method, meta: call.meta, trace: d });
    if (!d) return this.replyError(id, code, message);
    const intentId = this.o.capture?.call(d.toolName, d.argsDigest, d.traceId, d.verdict);
    const reply = errorResponse(id, code, message, { ward: wardObject(d, { refused, ...extra }) });
    d.durable.then(
      () => {
        if (intentId) this.o.capture?.result(intentId, d.verdict, reply.error);
        this.toClient(reply);
      },
      (err: Error) => this.traceFailed(id, err, intentId),
    );
  }

  /**
   * A tool call sent as a notification (no id, so no reply channel): dropped, never forwarded, and
   * its refusal traced (correlation id `<session>:notification-<n>`).
   */
  private refuseNotification(msg: JsonRpcMessage): void {
    const call = this.refusedCall(msg);
    this.o.log.warn('tool call sent as a notification (no id) dropped; not forwarded', { method: JSON.stringify(msg.method), tool: call.name });
    const d = this.refusal(call, `${this.o.sessionId}:notification-${++this.notificationSeq}`);
    if (!d) return;
    const intentId = this.o.capture?.call(d.toolName, d.argsDigest, d.traceId, d.verdict);
    d.durable.then(
      () => {
        if (intentId) this.o.capture?.result(intentId, 'dropped', { refused: 'notification', method: msg.method ?? '' });
      },
      (err: Error) => this.o.log.error('the trace of a dropped tool-call notification could not be written', { error: err.message }),
    );
  }

  /** Does `--approval elicit` or `--approval inbox` ask a person about this decision (a tool call's or another method's)? */
  private approvesInteractively(decision: CallDecision): boolean {
    return decision.verdict === 'require_approval' && (this.o.approvalMode === 'elicit' || (this.o.approvalMode === 'inbox' && this.o.inbox !== undefined));
  }

  /** Once the first decision's trace is written: ask inline or through the inbox. */
  private approveInteractively(msg: JsonRpcMessage, raw: Buffer | undefined, id: JsonRpcId, call: CallInput, correlation: string, first: CallDecision, firstIntent: string | undefined): void {
    first.durable.then(
      () => (this.o.approvalMode === 'elicit' ? this.approveInline : this.approveViaInbox).call(this, msg, raw, id, call, correlation, first, firstIntent),
      (err: Error) => this.traceFailed(id, err, firstIntent),
    );
  }

  /**
   * The decision after a person answered: a tool call's through the tool-call path (pins, held
   * tools), another method's (`resources/read`, `prompts/get`, ...) as that method.
   */
  private redecide(call: CallInput, correlation: string, opts: DecideOptions = {}): CallDecision | undefined {
    const again = { ...call, createdAt: formatRFC3339Nano(nowUTC()) };
    return call.method ? this.decideMethod(again, correlation, opts) : this.decideCall(again, correlation, opts)?.decision;
  }

  /** How a refusal of this call is shaped: a method other than tools/call has no result that says "blocked". */
  private denyAsFor(call: CallInput): DenyAs {
    return call.method ? 'error' : this.o.denyAs;
  }

  /**
   * `--approval elicit`: ask the user inline. Only an accept with approve=true does anything, and
   * only through the token path: a signed approval lands in the approval directory and the call is
   * decided again; what that decision says is final (and traced).
   */
  private approveInline(
    msg: JsonRpcMessage,
    raw: Buffer | undefined,
    id: JsonRpcId,
    call: Parameters<Gatekeeper['decide']>[0],
    correlation: string,
    first: CallDecision,
    firstIntent: string | undefined,
  ): void {
    const refuse = (o: ElicitOutcome, d = first, intentId = firstIntent) => {
      const reply = verdictReply(id, d, this.denyAsFor(call), this.o.approvalDir, { text: outcomeNote(o), ward: { elicitation: o.kind } }, { modern: this.isModern(msg) });
      if (intentId) this.o.capture?.result(intentId, d.verdict, reply.result ?? reply.error);
      this.toClient(reply);
    };
    if (!this.clientElicits) return refuse({ kind: 'unsupported' });
    if (this.serverGone) return this.replyError(id, RPC.UPSTREAM_UNAVAILABLE, `MCP server is not available: ${this.serverGone.message}`);
    void this.elicit(id, elicitParams(first, call.name, call.method !== undefined)).then((o) => {
      if (this.ended) return;
      this.o.log.info(`approval request for ${call.name}: ${o.kind}`, { trace_id: first.traceId, intent_digest: first.intentDigest });
      if (o.kind === 'cancelled' && o.detail === 'call cancelled') return; // the client cancelled the call itself
      if (o.kind !== 'approved') return refuse(o);
      let token: { path: string; tokenId: string };
      try {
        token = writeElicitedApproval({
          decision: first,
          key: this.o.gate.runtime.signingKey,
          clientName: this.clientName,
          reason: o.reason,
          approvalDir: this.o.approvalDir,
        });
      } catch (err) {
        this.o.log.error('could not record the inline approval', { error: (err as Error).message });
        return refuse({ kind: 'error', detail: `the approval could not be recorded: ${(err as Error).message}` });
      }
      let second: CallDecision;
      try {
        const decided = this.redecide(call, correlation);
        if (!decided) return this.replyError(id, RPC.INTERNAL_ERROR, 'Ward could not decide or trace this call; it was not forwarded');
        second = decided;
      } finally {
        retireElicitedApproval(token.path, this.o.approvalDir);
      }
      this.concludeAfterApproval(
        { id, msg, raw, call, correlation, firstIntent },
        second,
        { status: 'approval_elicited', detail: { token_id: token.tokenId } },
        { text: 'after inline approval', fields: { token_id: token.tokenId } },
        (intentId) => refuse({ kind: 'insufficient' }, second, intentId),
      );
    });
  }

  /**
   * `--approval inbox`: report the call to the daemon's approvals inbox and hold it until a person
   * answers there. An approval only puts tokens into the approval directory; the call is then
   * decided again and that decision (traced) is final. A denial is decided again too, so the block
   * with `approval_denied` has its own trace. A timeout, an unreachable daemon or a cancelled call
   * ends with the first decision's reply: never forwarded.
   */
  private approveViaInbox(
    msg: JsonRpcMessage,
    raw: Buffer | undefined,
    id: JsonRpcId,
    call: Parameters<Gatekeeper['decide']>[0],
    correlation: string,
    first: CallDecision,
    firstIntent: string | undefined,
  ): void {
    const inbox = this.o.inbox!;
    const refuse = (o: InboxOutcome, d = first, intentId = firstIntent) => {
      const ward: Record<string, unknown> = { approval_inbox: o.kind, ...('id' in o && o.id ? { approval_id: o.id } : {}) };
      const reply = verdictReply(id, d, this.denyAsFor(call), this.o.approvalDir, { text: inboxNote(o, inbox.url), ward }, { modern: this.isModern(msg) });
      if (intentId) this.o.capture?.result(intentId, d.verdict, reply.result ?? reply.error);
      this.toClient(reply);
    };
    if (this.serverGone) return this.replyError(id, RPC.UPSTREAM_UNAVAILABLE, `MCP server is not available: ${this.serverGone.message}`);
    const key = idKey(id);
    this.inboxWaits.get(key)?.abort();
    const stop = new AbortController();
    this.inboxWaits.set(key, stop);
    const ms = this.o.callTimeoutMs > 0 ? this.o.callTimeoutMs : ELICIT_DEFAULT_TIMEOUT_MS;
    void awaitInboxApproval(inbox, first, ms, stop.signal).then((o) => {
      if (this.inboxWaits.get(key) === stop) this.inboxWaits.delete(key);
      if (this.ended || o.kind === 'cancelled') return;
      this.o.log.info(`approvals inbox for ${call.name}: ${o.kind}`, { trace_id: first.traceId, intent_digest: first.intentDigest, ...('id' in o && o.id ? { approval_id: o.id } : {}) });
      if (o.kind === 'timeout' || o.kind === 'unreachable') return refuse(o);
      let decideOpts: DecideOptions = {};
      let written: string[] = [];
      if (o.kind === 'denied') decideOpts = { denied: true };
      else {
        try {
          written = writeInboxTokens(o.tokens, this.o.approvalDir);
        } catch (err) {
          this.o.log.error('could not store the approval from the inbox', { error: (err as Error).message });
          return refuse({ kind: 'unreachable', detail: `the approval could not be stored: ${(err as Error).message}`, id: o.id });
        }
      }
      const second = this.redecide(call, correlation, decideOpts);
      if (!second) return this.replyError(id, RPC.INTERNAL_ERROR, 'Ward could not decide or trace this call; it was not forwarded');
      this.concludeAfterApproval(
        { id, msg, raw, call, correlation, firstIntent },
        second,
        { status: `approval_inbox_${o.kind}`, detail: { approval_id: o.id } },
        { text: 'after the approvals inbox', fields: { approval_id: o.id, tokens: written.length } },
        (intentId) => refuse(o, second, intentId),
      );
    });
  }

  /**
   * The end of an approval round, inline or through the inbox: the call was decided again after a
   * person answered, and that decision is final. The first decision's capture says what happened
   * (`status`), the second is captured and logged, then forwarded when allowed or, once its trace
   * is written, refused with `refuse`.
   */
  private concludeAfterApproval(
    c: { id: JsonRpcId; msg: JsonRpcMessage; raw: Buffer | undefined; call: CallInput; correlation: string; firstIntent: string | undefined },
    second: CallDecision,
    outcome: { status: string; detail: JsonObject },
    log: { text: string; fields: Record<string, unknown> },
    refuse: (intentId: string | undefined) => void,
  ): void {
    if (c.firstIntent) this.o.capture?.result(c.firstIntent, outcome.status, { ...outcome.detail, next_trace_id: second.traceId });
    const intentId = this.o.capture?.call(second.toolName, second.argsDigest, second.traceId, second.verdict);
    this.o.log.info(`${second.verdict} ${log.text}: ${c.call.name}`, { reasons: second.reasonCodes.join(','), trace_id: second.traceId, ...log.fields });
    if (second.verdict === 'allow') return this.forwardDecided(c.id, c.msg, c.raw, second, intentId, c.call, c.correlation);
    second.durable.then(
      () => refuse(intentId),
      (err: Error) => this.traceFailed(c.id, err, intentId),
    );
  }

  /** Send Ward's own `elicitation/create` to the client, on the stream of the call it is about. */
  private elicit(callId: JsonRpcId, params: JsonObject): Promise<ElicitOutcome> {
    return new Promise((resolve) => {
      const rid = `${this.elicitPrefix}${++this.elicitSeq}`;
      const ms = this.o.callTimeoutMs > 0 ? this.o.callTimeoutMs : ELICIT_DEFAULT_TIMEOUT_MS;
      const timer = setTimeout(() => {
        if (!this.elicitations.delete(rid)) return;
        this.withdrawElicitation(rid, callId, 'ward: approval timed out');
        resolve({ kind: 'timeout' });
      }, ms);
      timer.unref?.();
      this.elicitations.set(rid, { callId, timer, answer: resolve });
      this.toClient({ jsonrpc: '2.0', id: rid, method: 'elicitation/create', params }, undefined, this.o.routeRelated ? callId : undefined);
    });
  }

  /** Tell the client Ward no longer waits for the answer to its approval request `rid`. */
  private withdrawElicitation(rid: string, callId: JsonRpcId, reason: string): void {
    this.toClient({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: rid, reason } }, undefined, this.o.routeRelated ? callId : undefined);
  }

  /** The client cancelled a call that waits for its approval: withdraw the question too. */
  private dropElicitations(callId: JsonRpcId): void {
    this.inboxWaits.get(idKey(callId))?.abort();
    for (const [rid, e] of this.elicitations) {
      if (idKey(e.callId) !== idKey(callId)) continue;
      this.elicitations.delete(rid);
      clearTimeout(e.timer);
      this.withdrawElicitation(rid, e.callId, 'ward: the call was cancelled');
      e.answer({ kind: 'cancelled', detail: 'call cancelled' });
    }
  }

  // ---- server → client ------------------------------------------------------------------------

  private fromServer(m: Inbound): void {
    this.lastActivity = Date.now();
    const msg = m.msg;
    if (m.kind === 'notification') {
      if (!knownNotification('server', msg.method!)) return this.handleUnknown(msg, undefined, m.raw, 'server');
      if (msg.method === 'notifications/cancelled' && this.serverSpans.size) {
        // The server withdrew one of its requests: it wants no answer, and the request's span ends.
        const rid = msg.params?.['requestId'];
        if (typeof rid === 'string' || typeof rid === 'number') this.endSpan(idKey(rid), 'cancelled', 'server');
      }
      return this.screenNotification(msg, m.raw);
    }
    if (m.kind === 'request') return this.serverRequest(msg, m.raw, msg.id as JsonRpcId);
    const id = msg.id;
    if (id === null || id === undefined) {
      this.o.log.warn('MCP server sent an error without an id', { error: msg.error });
      return;
    }
    const key = idKey(id);
    const p = this.pending.get(key);
    if (!p) {
      // A second answer to one request, or an answer to none: the client is owed nothing, and an
      // answer Ward did not route would reach it unscreened.
      if (this.abandoned.delete(key)) this.o.log.warn('late response dropped (the client already got an error)', { id });
      else this.o.log.warn('MCP server answered an id with no request in flight (a second answer, or one never asked); dropped', { id });
      return;
    }
    this.settle(p);
    if (p.method === 'initialize' && isJsonObject(msg.result)) {
      const v = msg.result['protocolVersion'];
      if (typeof v === 'string') {
        this.negotiatedVersion = v;
        this.o.server.setProtocolVersion?.(v);
      }
      this.bindPins(msg.result['serverInfo']);
      const info = msg.result['serverInfo'];
      if (isJsonObject(info) && typeof info['name'] === 'string' && info['name'] !== '') this.serverName = info['name'];
    }
    // 2026-07-28+: no initialize; the server names itself in its results' `_meta` (discover first).
    if (p.method === 'server/discover' && isJsonObject(msg.result) && !this.pins.serverKey) this.bindPins(resultServerInfo(msg.result));
    if (p.method === 'tools/list' && isJsonObject(msg.result)) {
      const rewritten = this.toolsList(msg as JsonRpcMessage & { result: JsonObject });
      if (rewritten) return this.toClient(rewritten);
    }
    const call = p.call;
    if (call && this.o.gate.runtime.policy.policy.results.enabled) return this.screenResult(call, msg, m.raw);
    // A forwarded call's trace was accepted by the sink before it was forwarded (Ward decision 6).
    this.toClient(msg, m.raw);
    // Remembered before the session reads its next message, so the next call already sees it.
    if (call) this.witnessResult(call, msg.result ?? msg.error);
    if (call?.intentId) {
      // Recorded now, digested later in a batch (RunCapture), off the next call's path.
      const failed = msg.error !== undefined || (isJsonObject(msg.result) && msg.result['isError'] === true);
      this.o.capture?.result(call.intentId, failed ? 'error' : 'ok', msg.result ?? msg.error, m.raw?.length);
    }
  }

  /**
   * The result firewall (the policy's `results` section): every result of a forwarded call is
   * inspected before the client sees it, and the decision — pass, redact or block — is signed as a
   * trace linked to the call's. A passed result goes out at once, byte for byte, its trace written
   * meanwhile; a redacted or blocked one only once its trace is accepted by the sink (a result
   * Ward changed always has its trace), and if that fails the client gets an error, never the
   * original.
   */
  private screenResult(call: ForwardedCall, msg: JsonRpcMessage, raw: Buffer | undefined): void {
    const isError = msg.error !== undefined;
    const payload = isError ? msg.error : msg.result;
    const results = this.o.gate.runtime.policy.policy.results;
    const id = msg.id as JsonRpcId;
    const withheld = (err: unknown) => {
      // Not even the decision could be made or signed: nothing of the result goes out.
      this.o.log.error('tool result could not be screened or its decision signed; result withheld', { tool: call.input.name, error: (err as Error).message });
      if (call.intentId) this.o.capture?.result(call.intentId, 'result_withheld', { message: 'result firewall failed' });
      this.replyError(id, RPC.INTERNAL_ERROR, 'Ward could not screen this tool result; it was withheld');
    };
    let screened: Screened;
    try {
      screened = screenResult(payload, results, this.digestKey, formatRFC3339Nano(nowUTC()));
    } catch (err) {
      return withheld(err);
    }
    this.o.metrics?.screened(screened.action, screened.flagged);
    const sign = () => {
      const trace = this.o.gate.decideResult(call.input, call.decision.traceId, `${call.correlation}/result`, screened.outcome());
      // The result firewall's decision as a span under the request's (`--otel`), with its action and detectors.
      // A passed result is the common case and says nothing new: only a redact or block gets its span.
      if (this.o.telemetry && call.traceContext && screened.action !== 'pass') {
        const decided = { ...trace, matchedRule: '', toolName: call.decision.toolName };
        this.o.telemetry.decision(mcpResultRecord(decided, this.o.sessionId, id, `${call.correlation}/result`, call.method, { action: screened.action, detectors: screened.flagged }), call.traceContext);
      }
      return trace;
    };
    const deliver = (out: JsonRpcMessage, outRaw?: Buffer) => {
      this.toClient(out, outRaw);
      const shown = out.result ?? out.error;
      this.witnessResult(call, shown);
      if (call.intentId) {
        const failed = out.error !== undefined || (isJsonObject(out.result) && out.result['isError'] === true);
        this.o.capture?.result(call.intentId, failed ? 'error' : 'ok', shown, outRaw?.length);
      }
    };
    if (screened.action === 'pass') {
      // The result goes out as it came; its decision is signed right after, off the reply's path.
      deliver(msg, raw);
      setImmediate(() => {
        try {
          const trace = sign();
          trace.durable.catch((err: Error) => this.o.log.error('the trace of a passed tool result could not be written', { tool: call.input.name, trace_id: trace.traceId, error: err.message }));
        } catch (err) {
          this.o.log.error('the decision on a passed tool result could not be signed', { tool: call.input.name, error: (err as Error).message });
        }
      });
      return;
    }
    let trace: ResultTrace;
    try {
      trace = sign();
    } catch (err) {
      return withheld(err);
    }
    const ward = { result_action: screened.action, detectors: screened.flagged, trace_id: trace.traceId, call_trace_id: call.decision.traceId, reason_codes: screened.reasonCodes };
    this.o.log.info(`tool result ${screened.action === 'block' ? 'blocked' : 'redacted'}: ${call.input.name}`, { detectors: screened.flagged.join(','), trace_id: trace.traceId, call_trace_id: call.decision.traceId });
    let out: JsonRpcMessage;
    if (!isError && screened.action === 'block' && call.method !== 'tools/call') {
      // Only a tool result can say "blocked" in its own shape; any other method's gets an error.
      out = errorResponse(id, RPC.DENIED, blockedText(screened.flagged), { ward });
    } else if (isError) {
      // A JSON-RPC error from the server: its code stays, its text and data are Ward's rewrite.
      const e = (isJsonObject(screened.delivered) ? screened.delivered : {}) as JsonObject;
      const code = isJsonObject(msg.error) && typeof msg.error['code'] === 'number' ? msg.error['code'] : RPC.INTERNAL_ERROR;
      const text = screened.action === 'block' ? blockedText(screened.flagged) : typeof e['message'] === 'string' ? e['message'] : 'error';
      out = errorResponse(id, code, text, { ward });
    } else {
      const r: JsonObject = { ...(isJsonObject(screened.delivered) ? screened.delivered : {}) };
      // A summary in place of a result (oversize) has no structuredContent; for a tool with an
      // outputSchema, clients accept that only on an error result.
      if (isJsonObject(payload) && payload['structuredContent'] !== undefined && r['structuredContent'] === undefined) r['isError'] = true;
      const meta = isJsonObject(r['_meta']) && screened.action !== 'block' ? r['_meta'] : {};
      out = resultResponse(id, shapeResult({ ...r, _meta: { ...meta, ward } }, call.modern && screened.action === 'block'));
    }
    trace.durable.then(
      () => deliver(out),
      (err: Error) => this.traceFailed(id, err, call.intentId),
    );
  }

  /** What the client was just given: remembered for provenance and, from a retrieval tool, as context evidence. */
  private witnessResult(call: ForwardedCall, shown: unknown): void {
    const w = this.o.witness;
    if (!w) return;
    w.observe(call.decision.traceId, call.decision.toolName, shown);
    if (isJsonObject(shown) && !('code' in shown && 'message' in shown)) {
      w.observeRetrieval(this.o.gate.runtime.policy.policy, {
        intentToolName: call.decision.toolName,
        server: this.serverName,
        toolName: call.input.name,
        args: call.input.arguments,
        result: shown,
        traceId: call.decision.traceId,
      });
    }
  }

  /**
   * A request from the server to the client. `ping` and `roots/list` are forwarded (the client's
   * roots answer is decided on its way back); `sampling/createMessage`, `elicitation/create` and
   * `tasks/*` are decided (`mcp.sampling.create_message`, ...) and, allowed, their params screened
   * and witnessed like a tool result before the client sees them; anything else is unknown.
   */
  private serverRequest(msg: JsonRpcMessage, raw: Buffer | undefined, id: JsonRpcId): void {
    const key = idKey(id);
    if (this.serverRequests.has(key)) {
      this.o.log.warn('MCP server reused the id of a request the client has not answered; refused', { id, method: JSON.stringify(msg.method) });
      // Answered at once, its span with it: the request in flight with this id keeps its span.
      this.refusedSpan({ cause: 'id_reused', id, method: msg.method, meta: metaOf(msg.params), from: 'server' }, RPC.INVALID_REQUEST);
      this.sendToServer(errorResponse(id, RPC.INVALID_REQUEST, `Invalid Request: id ${JSON.stringify(id)} is already in use by a request the client has not answered`));
      return;
    }
    const route = requestRoute('server', msg.method!);
    if (route.kind === 'plumbing' || route.kind === 'roots') {
      // A span for the relayed request too (`--otel`); the client's spans become its children.
      return this.relayServerRequest(msg, raw, id, this.relaySpan(msg, id, 'server'));
    }
    if (route.kind !== 'intent') return this.handleUnknown(msg, id, raw, 'server');
    const startedAt = preciseNow();
    const call = this.methodCall(msg.method!, msg.params, route.intent);
    const correlation = `${this.o.sessionId}:server:${String(id)}`;
    const decision = this.decideMethod(call, correlation);
    if (!decision) {
      this.refusedSpan({ cause: 'not_signed', id, method: msg.method, meta: call.meta, from: 'server' });
      return this.toServer(errorResponse(id, RPC.INTERNAL_ERROR, 'Ward could not decide or trace this request; it was not forwarded'));
    }
    // Ward's span, child of the server's `_meta.traceparent`; the client's spans become its children.
    const traceContext = this.traced(decision, id, correlation, msg.method!, call, startedAt, 'server');
    if (decision.verdict === 'allow') return this.relayServerRequest(msg, raw, id, traceContext, { decision, call, correlation });
    this.o.log.info(`${decision.verdict}: ${msg.method!} (from the MCP server)`, { intent: decision.toolName, reasons: decision.reasonCodes.join(','), trace_id: decision.traceId });
    this.replyOnceTraced(id, decision, undefined, verdictReply(id, decision, 'error', this.o.approvalDir), 'server');
  }

  /**
   * A server message on its way to the client. Decided ones go once their trace is written, their
   * params screened by the result firewall (a block answers the server with an error instead) and
   * remembered by the witness: what they show the model is what a tool result would show it.
   * `traceContext` (`--otel`): Ward's span for the request, the parent the client is given in `_meta`.
   */
  private relayServerRequest(
    msg: JsonRpcMessage,
    raw: Buffer | undefined,
    id: JsonRpcId | undefined,
    traceContext: TraceCarrier | undefined,
    decided?: { decision: CallDecision; call: CallInput; correlation: string },
  ): void {
    const send = (out: JsonRpcMessage, outRaw?: Buffer) => {
      if (id !== undefined) this.serverRequests.set(idKey(id), { method: msg.method!, id });
      if (traceContext?.traceparent) this.toClient(withTraceContext(out, traceContext), undefined, this.relatedFor(out));
      else this.toClient(out, outRaw, this.relatedFor(out));
      // What the server wrote is what the model sees (Ward's traceparent is not a value it showed).
      if (decided && this.o.witness && out.params !== undefined) this.o.witness.observe(decided.decision.traceId, decided.decision.toolName, out.params);
    };
    if (!decided) return send(msg, raw);
    const { decision, call, correlation } = decided;
    const refuse = (code: number, text: string, data?: unknown) => {
      if (id !== undefined) this.toServer(errorResponse(id, code, text, data));
    };
    decision.durable.then(
      () => {
        if (this.ended) return;
        const results = this.o.gate.runtime.policy.policy.results;
        if (!results.enabled) return send(msg, raw);
        let screened: Screened;
        let trace: ResultTrace;
        try {
          screened = screenResult(msg.params ?? {}, results, this.digestKey, formatRFC3339Nano(nowUTC()));
          trace = this.o.gate.decideResult(call, decision.traceId, `${correlation}/params`, screened.outcome());
        } catch (err) {
          this.o.log.error('server request could not be screened or its decision signed; withheld', { method: msg.method, error: (err as Error).message });
          return refuse(RPC.INTERNAL_ERROR, 'Ward could not screen this request; it was withheld');
        }
        if (screened.action === 'pass') return send(msg, raw);
        const ward = { result_action: screened.action, detectors: screened.flagged, trace_id: trace.traceId, call_trace_id: decision.traceId, reason_codes: screened.reasonCodes };
        this.o.log.info(`server request ${screened.action === 'block' ? 'blocked' : 'redacted'}: ${msg.method!}`, { detectors: screened.flagged.join(','), trace_id: trace.traceId });
        trace.durable.then(
          () => {
            if (screened.action === 'block') refuse(RPC.DENIED, blockedText(screened.flagged), { ward });
            else send({ ...msg, params: screened.delivered as JsonObject });
          },
          (err: Error) => refuse(RPC.INTERNAL_ERROR, `Ward could not persist the decision trace: ${err.message}`),
        );
      },
      (err: Error) => refuse(RPC.INTERNAL_ERROR, `Ward could not persist the decision trace: ${err.message}`),
    );
  }

  /**
   * The client's answer to a server request. Only an answer to a request the server sent and the
   * client has not answered yet goes back; a `roots/list` answer — which tells the server what it
   * may touch — is decided first (`mcp.roots.list`, each root a target) and, when not allowed,
   * the server gets an error instead.
   */
  private answerToServer(msg: JsonRpcMessage, raw: Buffer | undefined): void {
    const id = msg.id;
    const req = id === null || id === undefined ? undefined : this.serverRequests.get(idKey(id));
    if (!req) {
      this.o.log.warn('client answered a request the MCP server did not send or that was already answered; dropped', { id });
      return;
    }
    this.serverRequests.delete(idKey(req.id));
    if (req.method !== 'roots/list' || !isJsonObject(msg.result)) return this.toServer(msg, raw);
    // Read as an intent like a request, so bounded like one (the client writes it).
    const { over, offLoop } = checkRequest(msg.result, raw?.length, this.o.limits ?? DEFAULT_REQUEST_LIMITS);
    if (over) {
      this.o.log.warn('roots answer over a limit refused; not forwarded', { id: req.id, why: over });
      return this.toServer(errorResponse(req.id, RPC.LIMIT_EXCEEDED, over));
    }
    const startedAt = preciseNow();
    const call = this.methodCall('roots/list', msg.result, ROOTS_ANSWER);
    const answer = { call, correlation: `${this.o.sessionId}:server:${String(req.id)}/answer`, startedAt };
    if (offLoop && this.o.gate.offLoop) {
      const fail = (why: string) => this.toServer(errorResponse(req.id, RPC.INTERNAL_ERROR, `Ward could not decide the roots answer (${why}); it was not forwarded`));
      return this.holdWhileDeciding(call, answer.correlation, fail, (o) => this.rootsAnswerDecided(msg, raw, req, 'decision' in o ? o.decision : this.methodRefusal(call, answer.correlation, o.error), answer));
    }
    this.rootsAnswerDecided(msg, raw, req, this.decideMethod(call, answer.correlation), answer);
  }

  private rootsAnswerDecided(msg: JsonRpcMessage, raw: Buffer | undefined, req: { id: JsonRpcId }, decision: CallDecision | undefined, answer: { call: CallInput; correlation: string; startedAt: number }): void {
    if (!decision) return this.toServer(errorResponse(req.id, RPC.INTERNAL_ERROR, 'Ward could not decide or trace the roots answer; it was not forwarded'));
    const t = this.o.telemetry;
    if (t) {
      // The decision on the answer (`--otel`, `--decision-log`): a span under the roots/list request's, and its log record.
      const record = this.decisionRecord(t, decision, req.id, answer.correlation, 'roots/list', answer.call, answer.startedAt, 'server');
      record.operation = ROOTS_ANSWER_OPERATION;
      t.decision(record, this.serverSpans.get(idKey(req.id))?.carrier, answer.startedAt);
    }
    if (decision.verdict === 'allow') {
      decision.durable.then(
        () => this.toServer(msg, raw),
        (err: Error) => this.toServer(errorResponse(req.id, RPC.INTERNAL_ERROR, `Ward could not persist the decision trace: ${err.message}`)),
      );
      return;
    }
    this.o.log.info(`${decision.verdict}: roots/list answer`, { reasons: decision.reasonCodes.join(','), trace_id: decision.traceId });
    this.replyOnceTraced(req.id, decision, undefined, verdictReply(req.id, decision, 'error', this.o.approvalDir), 'server');
  }

  /**
   * A server notification on its way to the client (a log message, progress, ...): screened by
   * the result firewall like a tool result. A clean one goes at once, as it came. A flagged one is
   * decided as `mcp.notification` (its method the target) and its screening signed as a result of
   * that decision; once both traces are written it goes redacted, or is dropped when blocked (a
   * notification has no reply to carry an error).
   */
  private screenNotification(msg: JsonRpcMessage, raw: Buffer | undefined): void {
    const results = this.o.gate.runtime.policy.policy.results;
    const seq = ++this.notificationSeq;
    const correlation = `${this.o.sessionId}:server:notification-${seq}`;
    const pass = () => {
      this.toClient(msg, raw, this.relatedFor(msg));
      this.witnessNotification(msg, correlation);
    };
    if (!results.enabled || msg.params === undefined) return pass();
    let screened: Screened;
    try {
      screened = screenResult(msg.params, results, this.digestKey, formatRFC3339Nano(nowUTC()));
    } catch (err) {
      this.o.log.error('server notification could not be screened; dropped', { method: msg.method, error: (err as Error).message });
      return;
    }
    if (screened.action === 'pass') return pass();
    const call = this.methodCall(msg.method!, {}, SERVER_NOTIFICATION);
    const decision = this.decideMethod(call, correlation);
    let trace: ResultTrace | undefined;
    try {
      if (decision) trace = this.o.gate.decideResult(call, decision.traceId, `${correlation}/params`, screened.outcome());
    } catch (err) {
      this.o.log.error('the screening of a server notification could not be signed; dropped', { method: msg.method, error: (err as Error).message });
    }
    if (!decision || !trace) return;
    const deliver = decision.verdict === 'allow' && screened.action !== 'block';
    this.o.log.info(`server notification ${deliver ? 'redacted' : 'dropped'}: ${msg.method!}`, { detectors: screened.flagged.join(','), trace_id: trace.traceId, verdict: decision.verdict });
    Promise.all([decision.durable, trace.durable]).then(
      () => {
        if (!deliver) return;
        const out = { ...msg, params: screened.delivered as JsonObject };
        this.toClient(out, undefined, this.relatedFor(out));
        this.witnessNotification(out, decision.traceId);
      },
      (err: Error) => this.o.log.error('decision trace could not be written; server notification dropped', { method: msg.method, error: err.message }),
    );
  }

  /**
   * What a server notification showed the model (a log line, a progress message, an updated
   * resource's URI) is remembered like a tool result, so a value a server logs cannot be posted
   * unseen. A clean notification has no trace of its own: its source is named by the correlation id
   * its trace would have (`<session>:server:notification-<n>`); a redacted one by its decision's trace.
   */
  private witnessNotification(msg: JsonRpcMessage, source: string): void {
    if (this.o.witness && msg.params !== undefined) this.o.witness.observe(source, SERVER_NOTIFICATION.tool, msg.params);
  }

  /** The block reply for a tool whose definition changed says how an operator accepts it. */
  private changedToolNote(d: CallDecision, tool: string): { text: string; ward: Record<string, unknown> } | undefined {
    if (!d.reasonCodes.includes('mcp_tool_definition_changed')) return undefined;
    const key = this.pins.serverKey;
    if (!key) return { text: 'The tool\'s definition changed during this session; restart the session to pin it again.', ward: {} };
    return {
      text: `The tool's definition changed since it was pinned. An operator (not the agent) can review it with \`ward mcp pins list --server ${key}\` and accept it with \`ward mcp pins accept --server ${key} --tool ${tool}\`.`,
      ward: { server_key: key },
    };
  }

  /** `--pin-tools`: pins persist per server, keyed by its serverInfo name and the upstream command line or URL. */
  private bindPins(info: unknown): void {
    if (!this.o.pinTools || !this.o.pins) return;
    const name = isJsonObject(info) && typeof info['name'] === 'string' ? info['name'] : 'unknown';
    const version = isJsonObject(info) && typeof info['version'] === 'string' ? info['version'] : undefined;
    const server = { name, version, upstream: this.o.pins.upstream };
    const key = serverKey(server);
    this.pins.bind({ store: this.o.pins.store, key, server });
    this.o.log.debug('tool pins', { server_key: key, file: this.o.pins.store.path(key) });
  }

  /** Learn annotations; pin and hide tools. Returns a rewritten message, or undefined to forward the original. */
  private toolsList(msg: JsonRpcMessage & { result: JsonObject }): JsonRpcMessage | undefined {
    const tools = msg.result['tools'];
    if (!Array.isArray(tools)) return undefined;
    const listed: JsonObject[] = [];
    for (const t of tools) {
      if (!isJsonObject(t) || typeof t['name'] !== 'string') continue;
      listed.push(t);
      this.listed.add(t['name']);
      const folded = foldSpelling(t['name']);
      if (!this.listedByFold.has(folded)) this.listedByFold.set(folded, t['name']);
      const h = hintsOf(t['annotations']);
      if (h) this.hints.set(t['name'], h);
      else this.hints.delete(t['name']);
    }
    const suspicious = this.o.witness ? toolSuspicion(listed) : undefined;
    const codes = suspicious?.size ? new Map([...suspicious].map(([n, v]) => [n, v.codes])) : undefined;
    if (!this.o.pinTools && codes) for (const [n, c] of codes) this.sessionHeld.set(n, c);
    /** `--pin-tools`: tools whose definition changed since it was pinned, hidden until an operator accepts it. */
    const changed = new Set<string>();
    if (this.o.pinTools) {
      // A session that never saw initialize or server/discover (a 2026-07-28 client may probe on
      // another connection) binds its pins here, to the identity this result carries.
      if (!this.pins.serverKey) this.bindPins(resultServerInfo(msg.result));
      for (const name of this.pins.observeList(listed, codes)) {
        // Read again: an accept in the store lifts the change for this listing already.
        if (!this.pins.isChanged(name)) continue;
        changed.add(name);
        if (this.pinWarned.has(name)) continue;
        this.pinWarned.add(name);
        const key = this.pins.serverKey;
        this.o.log.warn('tool definition changed since it was pinned; hidden from tools/list and its calls blocked until an operator accepts it', {
          tool: name,
          ...(key ? { server_key: key, accept: `ward mcp pins accept --server ${key} --tool ${name}` } : {}),
        });
      }
    }
    for (const [name, why] of suspicious ?? []) {
      if (this.heldWarned.has(name) || !this.heldFor(name)) continue;
      this.heldWarned.add(name);
      const key = this.o.pinTools ? this.pins.serverKey : undefined;
      this.o.log.warn('tool definition under suspicion; hidden from tools/list and its calls blocked until an operator accepts it', {
        tool: name,
        reasons: why.codes.join(','),
        found: why.found.slice(0, 8).join('; '),
        ...(key ? { server_key: key, accept: `ward mcp pins accept --server ${key} --tool ${name}` } : { accept: 'run the proxy with --pin-tools, then ward mcp pins accept' }),
      });
    }
    // A held tool is not listed: its description is what could mislead the model, whether or not it is called.
    const held = (t: unknown) => isJsonObject(t) && typeof t['name'] === 'string' && suspicious?.has(t['name']) === true && this.heldFor(t['name']) !== undefined;
    const policy = this.o.gate.runtime.policy.policy;
    const prefix = this.o.gate.mapping.toolPrefix;
    const blocked = (t: unknown) => this.o.hideBlockedTools && isJsonObject(t) && typeof t['name'] === 'string' && alwaysBlocked(policy, intentToolName(prefix, t['name']).toLowerCase());
    // A changed definition is not listed either: the model must not read the new text (it may tell it
    // to do something) before an operator accepted it, whether or not the scan flags it.
    const pinChanged = (t: unknown) => isJsonObject(t) && typeof t['name'] === 'string' && changed.has(t['name']);
    const kept = tools.filter((t) => !held(t) && !blocked(t) && !pinChanged(t));
    if (kept.length === tools.length) return undefined;
    return { ...msg, result: { ...msg.result, tools: kept } };
  }

  private readonly pinWarned = new Set<string>();
  /** Without --pin-tools: tools held for a suspicious definition, for the rest of the session. */
  private readonly sessionHeld = new Map<string, string[]>();
  private readonly heldWarned = new Set<string>();

  /** The reason codes a tool is held for (a suspicious definition no operator accepted), or undefined. */
  private heldFor(name: string): string[] | undefined {
    if (!this.o.witness) return undefined;
    return this.o.pinTools ? this.pins.heldFor(name) : this.sessionHeld.get(name);
  }

  /** The block reply for a held tool says who can lift the hold, and how. */
  private heldToolNote(tool: string): { text: string; ward: Record<string, unknown> } {
    const key = this.o.pinTools ? this.pins.serverKey : undefined;
    if (!key) {
      return {
        text: 'Ward holds this tool: its definition looks like it carries instructions for the model. An operator (not the agent) can review and accept it when the proxy runs with --pin-tools (`ward mcp pins list`, `ward mcp pins accept`).',
        ward: {},
      };
    }
    return {
      text: `Ward holds this tool: its definition looks like it carries instructions for the model. An operator (not the agent) can review it with \`ward mcp pins list --server ${key}\` and accept it with \`ward mcp pins accept --server ${key} --tool ${tool}\`.`,
      ward: { server_key: key },
    };
  }

  /** Streamable HTTP: progress goes with the request that asked for it; anything else with the latest open request. */
  private relatedFor(msg: JsonRpcMessage): JsonRpcId | undefined {
    if (!this.o.routeRelated) return undefined;
    if (msg.method === 'notifications/progress') {
      const token = msg.params?.['progressToken'];
      if (typeof token === 'string' || typeof token === 'number') {
        const id = this.progress.get(token);
        if (id !== undefined) return id;
      }
    }
    let last: JsonRpcId | undefined;
    for (const p of this.pending.values()) last = p.id;
    return last;
  }

  // ---- faults -------------------------------------------------------------------------------

  private timedOut(key: string): void {
    const p = this.pending.get(key);
    if (!p) return;
    this.settle(p);
    this.abandoned.add(key);
    this.o.log.warn('MCP server did not answer in time', { method: p.method, id: p.id, timeout_ms: this.o.callTimeoutMs });
    this.toServer({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: p.id, reason: 'ward: call timeout' } });
    const message = `MCP server did not answer ${p.method} within ${this.o.callTimeoutMs} ms`;
    if (p.call?.intentId) this.o.capture?.result(p.call.intentId, 'timeout', { message });
    this.replyError(p.id, RPC.UPSTREAM_TIMEOUT, message);
  }

  /**
   * A client message Ward could not read, answered with a JSON-RPC error. Sent straight to the
   * client, not through `toClient`: the answer to a message Ward could not read does not answer a
   * request in flight that has the same id, whose id stays taken (a reused id is refused) and whose
   * span stays open.
   */
  private malformedFromClient(reason: string, id: JsonRpcId | null, oversize?: { response: boolean }): void {
    this.o.log.warn(`malformed message from the client: ${reason}`);
    const code = reason === 'not JSON' ? RPC.PARSE_ERROR : RPC.INVALID_REQUEST;
    // An answer the client sent over the size limit is not a request: no request span.
    if (!oversize?.response) this.refusedSpan({ cause: oversize ? 'limit_exceeded' : 'malformed', id }, code);
    this.o.client
      .send(errorResponse(id, code, code === RPC.PARSE_ERROR ? 'Parse error' : `Invalid Request: ${reason}`))
      .catch((err: Error) => this.o.log.debug('could not deliver to the client', { error: err.message }));
  }

  /**
   * A server message Ward could not read. Its request, when its id is known and pending, gets an
   * error. An answer over `--max-message-bytes` whose id cannot be told (its first and last bytes
   * name none) fails every request in flight: one of them will never be answered otherwise, and
   * the client must not wait forever (`--call-timeout 0`).
   */
  private malformedFromServer(reason: string, id: JsonRpcId | null, oversize?: { response: boolean }): void {
    this.o.log.warn(`malformed message from the MCP server: ${reason}`, { id });
    const p = id === null ? undefined : this.pending.get(idKey(id));
    if (p) {
      this.settle(p);
      if (p.call?.intentId) this.o.capture?.result(p.call.intentId, 'result_dropped', { message: reason });
      return this.replyError(p.id, RPC.INTERNAL_ERROR, `MCP server sent a response Ward could not accept: ${reason}; it was dropped`);
    }
    if (!oversize?.response || id !== null) return;
    for (const q of [...this.pending.values()]) {
      this.settle(q);
      if (q.call?.intentId) this.o.capture?.result(q.call.intentId, 'result_dropped', { message: reason });
      this.replyError(q.id, RPC.INTERNAL_ERROR, `MCP server sent a response Ward could not accept (${reason}) and did not say which request it answered; this request may have been it, and is failed`);
    }
  }

  private traceFailed(id: JsonRpcId, err: Error, intentId: string | undefined): void {
    this.o.log.error('decision trace could not be written; reply withheld', { error: err.message });
    if (intentId) this.o.capture?.result(intentId, 'trace_failed', { message: err.message });
    this.replyError(id, RPC.INTERNAL_ERROR, `Ward could not persist the decision trace: ${err.message}`);
  }

  private serverClosed(error: Error | undefined): void {
    this.serverGone = error ?? new Error('MCP server closed the connection');
    const why = this.serverGone.message;
    if (this.pending.size) this.o.log.error(`MCP server ended with ${this.pending.size} request(s) in flight: ${why}`);
    for (const p of [...this.pending.values()]) {
      this.settle(p);
      if (p.call?.intentId) this.o.capture?.result(p.call.intentId, 'server_exited', { message: why });
      this.replyError(p.id, RPC.UPSTREAM_UNAVAILABLE, `MCP server exited before answering: ${why}`);
    }
    void this.end(error ?? undefined, 'server');
  }

  // ---- plumbing -----------------------------------------------------------------------------

  private settle(p: Pending): void {
    if (p.timer) clearTimeout(p.timer);
    this.pending.delete(idKey(p.id));
    if (p.progressToken !== undefined) this.progress.delete(p.progressToken);
  }

  private replyError(id: JsonRpcId, code: number, message: string): void {
    this.toClient(errorResponse(id, code, message));
  }

  private toClient(msg: JsonRpcMessage, raw?: Buffer, related?: JsonRpcId): void {
    if (msg.method === undefined && msg.id !== undefined && msg.id !== null) {
      const key = idKey(msg.id);
      this.inflight.delete(key);
      // The answer reaches the client: the request's span ends (with the JSON-RPC error, if it is one).
      if (this.spans.size) this.endSpan(key, isJsonObject(msg.error) && typeof msg.error['code'] === 'number' ? msg.error['code'] : undefined);
    }
    this.o.client.send(msg, raw, related).catch((err: Error) => {
      if (related !== undefined) {
        // The request's stream is gone; try the session's standalone stream.
        this.o.client.send(msg, raw).catch(() => undefined);
        return;
      }
      this.o.log.debug('could not deliver to the client', { error: err.message });
    });
  }

  private toServer(msg: JsonRpcMessage, raw?: Buffer): void {
    // The answer to one of the server's requests reaches it: the request's span ends (with the JSON-RPC error, if it is one).
    if (this.serverSpans.size && msg.method === undefined && msg.id !== undefined && msg.id !== null) {
      this.endSpan(idKey(msg.id), isJsonObject(msg.error) && typeof msg.error['code'] === 'number' ? msg.error['code'] : undefined, 'server');
    }
    this.sendToServer(msg, raw);
  }

  /** `toServer` without ending a span: Ward's answer to a server request that does not answer the one in flight with its id. */
  private sendToServer(msg: JsonRpcMessage, raw?: Buffer): void {
    if (this.serverGone) return;
    this.o.server.send(msg, raw).catch((err: Error) => this.o.log.debug('could not deliver to the MCP server', { error: err.message }));
  }

  /** End the session: the other side is closed too. Idempotent. */
  async end(error?: Error, from?: 'client' | 'server'): Promise<void> {
    // A second caller (SIGTERM while an idle session is already ending) waits for the same end,
    // so nobody returns before the server process is stopped.
    if (this.ended) return this.done.then(() => undefined);
    this.ended = true;
    for (const p of this.pending.values()) if (p.timer) clearTimeout(p.timer);
    for (const key of [...this.spans.keys()]) this.endSpan(key, 'session_ended');
    for (const key of [...this.serverSpans.keys()]) this.endSpan(key, 'session_ended', 'server');
    for (const e of this.elicitations.values()) clearTimeout(e.timer);
    for (const w of this.inboxWaits.values()) w.abort();
    this.inboxWaits.clear();
    this.elicitations.clear();
    // Give replies already queued (errors for pending calls) a chance to reach the client.
    await new Promise((r) => setImmediate(r));
    const closing: Promise<void>[] = [];
    if (from !== 'server') closing.push(this.o.server.close().catch(() => undefined));
    if (from !== 'client') closing.push(this.o.client.close().catch(() => undefined));
    await Promise.all(closing);
    this.resolveDone({ error: from === 'server' ? error ?? undefined : error });
  }
}
