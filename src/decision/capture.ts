// Moved to trace/capture.ts (a capture is a data format the store and replay read too); this
// re-export keeps imports working while the decision pipeline is being rebuilt, and goes with it.
export * from '../trace/capture.js';
