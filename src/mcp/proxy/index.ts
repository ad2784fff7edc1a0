// The MCP proxy (mcp.md): Ward between a real MCP client and server, enforcing the gate on tools/call.
export { ProxySession, type SessionOptions, type SessionEnd } from './session.js';
export { Gatekeeper, type CallDecision, type GatekeeperOptions } from './gatekeeper.js';
export { intentForCall, operationFromToolName, loadTargetsMap, DEFAULT_TARGET_MAPPING, hintsOf, type MappingOptions, type CallInput, type TargetMapping } from './intent.js';
export { verdictReply, approveCommand, wardObject, type DenyAs } from './replies.js';
export { ToolPins, type PinBinding, alwaysBlocked, definitionDigest } from './tools.js';
export { PinStore, pinsDir, serverKey, observeTools, acceptPins, forgetPins, type PinsDocument, type ToolPin, type ServerIdentity } from './pins.js';
export { declaresFormElicitation, elicitOutcome, elicitParams, type ApprovalMode, type ElicitOutcome } from './elicit.js';
export { RunCapture } from './run-capture.js';
export { ProxyRuntime, runStdio, runListen, isLoopback, DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT_MS, type ProxyConfig, type ListenOptions, type Upstream } from './host.js';
export { ProxyLog } from './log.js';
export { LineReader } from './framing.js';
export { isToolCallMethod, RPC } from './jsonrpc.js';
export { isModernProtocolVersion, FIRST_MODERN_PROTOCOL_VERSION } from './protocol.js';
export { StreamPeer, ChildServerPeer, DeferredPeer, type Peer, type Inbound } from './peer.js';
export { SdkPeer } from './sdk-peer.js';
export { JournalTraceSink, recoverJournals } from './journal-sink.js';
