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

/**
 * A peer over an official SDK transport (Streamable HTTP on either side). The SDK does the framing,
 * sessions, SSE streams and resumption; the proxy sees JSON-RPC messages.
 */
export class SdkPeer implements Peer {
  onmessage?: (m: Inbound) => void;
  onmalformed?: (reason: string, id: JsonRpcId | null) => void;
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
