// The SDK: Ward as a library for agent code (decide, guard tools, build intents).
export { Ward, guardTool } from './ward.js';
export type { WardOptions, WardEvaluateOptions, WardDecision, ToolFunction, DescribeIntent } from './ward.js';
export { WardBlockedError, isWardBlockedError } from './errors.js';
export type { BlockedDecision } from './errors.js';
export { intent, IntentBuilder } from './intent.js';
export type {
  IntentRequest,
  IntentSpec,
  IntentTarget,
  IntentArgProvenance,
  IntentContext as IntentRequestContext,
  TargetKind,
  EndpointClass,
  ProvenanceSource,
} from './intent.js';
