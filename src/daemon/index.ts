// `ward serve`: the governance daemon. One process serves decisions, traces and the pack store over
// HTTP, owns the store, and answers a decision only once its signed trace is durable.
export { startDaemon, type Daemon } from './server.js';
export { DEFAULTS as DAEMON_DEFAULTS, type DaemonOptions, type DaemonContext } from './context.js';
export { GroupCommitSink, DiscardingSink, type DaemonTraceSink, type GroupCommitOptions } from './trace-sink.js';
export { PolicyHolder, type PolicyStatus, type ReloadResult, type ReloadTrigger } from './policy-holder.js';
export { DaemonMetrics } from './metrics.js';
export { isLoopbackHost } from '../edge/guard.js';
