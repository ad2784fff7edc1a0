import type { JsonRpcId, JsonRpcMessage } from './jsonrpc.js';
import { messageKind, salvageId } from './jsonrpc.js';
import type { Inbound, Peer } from './peer.js';

/** The part of the SDK `Transport` interface the proxy uses (every SDK transport implements it). */
export interface SdkTransport {
  start(): Promise<void>;
  close(): Promise<void>;
  send(message: never, options?: { relatedRequestId?: JsonRpcId }): Promise<void>;
  onmessage?: ((message: never, extra?: never) => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onclose?: (() => void) | undefined;
  setProtocolVersion?: (version: string) => void;
}

/** The `fetch` shape the SDK's Streamable HTTP client transport calls (`options.fetch`). */
export type TransportFetch = (input: string | URL, init?: { signal?: AbortSignal | null | undefined } & Record<string, unknown>) => Promise<unknown>;

/**
 * Give every request of a Streamable HTTP client transport its own abort signal.
 *
 * Why: `StreamableHTTPClientTransport` (`@modelcontextprotocol/client` 2.4.0, `_send`,
 * `_startOrAuthSse` and `terminateSession`) passes its one transport-lifetime signal
 * (`this._abortController.signal`, aborted by `close()`) as `init.signal` to every fetch when the
 * caller gives no per-request signal, which the proxy never does. undici's `Request` constructor
 * then adds an `abort` listener to that signal per request (`util.addAbortListener`) and removes it
 * only from a `FinalizationRegistry`, when the request's internal controller is garbage-collected,
 * so the long-lived signal collects one listener per call until a GC happens to run (undici raises
 * that signal's limit to 1,500; requests promoted to the old generation outlive many calls) and
 * `MaxListenersExceededWarning` follows in long sessions.
 *
 * Here each request gets `AbortSignal.any([transportSignal])`: a fresh signal that still aborts when
 * the transport closes, but is tracked by the source through a weak reference instead of a listener,
 * so the transport's signal keeps no per-request listeners at all and undici's listener lives and
 * dies with the request's own signal.
 */
export function perRequestSignals<F extends TransportFetch>(fetchImpl: F): F {
  return ((input: string | URL, init?: Parameters<TransportFetch>[1]) => {
    const signal = init?.signal;
    if (!signal || signal.aborted) return fetchImpl(input, init);
    return fetchImpl(input, { ...init, signal: AbortSignal.any([signal]) });
  }) as F;
}

/**
 * A peer over an official SDK transport (Streamable HTTP on either side). The SDK does the framing,
 * sessions, SSE streams and resumption; the proxy sees JSON-RPC messages.
 */
export class SdkPeer implements Peer {
  onmessage?: (m: Inbound) => void;
  onmalformed?: (reason: string, id: JsonRpcId | null, oversize?: { response: boolean }) => void;
  onclose?: (error?: Error) => void;
  private lastError: Error | undefined;
  private closed = false;

  constructor(
    readonly transport: SdkTransport,
    private readonly onTransportError?: (error: Error) => void,
  ) {
    transport.onmessage = ((message: unknown) => {
      const kind = messageKind(message);
      if (!kind) {
        this.onmalformed?.('not a JSON-RPC 2.0 message', salvageId(message));
        return;
      }
      this.onmessage?.({ msg: message as JsonRpcMessage, kind });
    }) as never;
    transport.onerror = (error: Error) => {
      this.lastError = error;
      this.onTransportError?.(error);
    };
    transport.onclose = () => {
      if (this.closed) return;
      this.closed = true;
      this.onclose?.();
    };
  }

  start(): Promise<void> {
    return this.transport.start();
  }

  send(msg: JsonRpcMessage, _raw?: Buffer, relatedRequestId?: JsonRpcId): Promise<void> {
    return this.transport.send(msg as never, relatedRequestId !== undefined ? { relatedRequestId } : undefined);
  }

  setProtocolVersion(version: string): void {
    this.transport.setProtocolVersion?.(version);
  }

  get error(): Error | undefined {
    return this.lastError;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.transport.close();
  }
}
