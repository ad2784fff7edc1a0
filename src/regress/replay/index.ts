// Policy replay: recorded decisions re-evaluated under a candidate policy.
export * from './types.js';
export { replayPolicy, replayOne, REPLAY_REPORT_SCHEMA, type ReplayOptions, type ReplayReport, type ReplayEntry, type ChangeCounts } from './replay.js';
export { recordFromCapture, recordsFromTraceDir, recordsFromStore, recordsFromRunpack, type StoreQuery } from './sources.js';
export { renderReplayJson, renderReplayJunit, renderReplayMarkdown } from './report.js';
