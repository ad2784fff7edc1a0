// The SDK: Ward as a library for agent code (decide, guard tools, build intents).
export { Ward, guardTool } from './ward.js';
export type { WardOptions, WardEvaluateOptions, WardDecision, WardDurability, ToolFunction, DescribeIntent, ApprovalRequest, ApprovalAnswer, GuardToolOptions, WardObservedResult } from './ward.js';
export type { ApprovalTokenFile, WaitForTokenOptions } from '../decision/approval-dir.js';
export type { StateDirResolution, StateDirSource } from '../state/state-dir.js';
export { WardBlockedError, isWardBlockedError, modelToolError } from './errors.js';
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
