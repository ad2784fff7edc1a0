import { parentPort, workerData } from 'node:worker_threads';
import { answerCalls } from '../../edge/worker-rpc.js';
import type { VerifyKey } from '../../keys/index.js';
import { decideSignedCall, type CallDecisionConfig } from './call-decision.js';
import type { ToWorker } from './decision-thread.js';

/**
 * The worker side of `DecisionThread`: decides each call it is handed with `decideSignedCall`,
 * one at a time, and posts the signed decision (or the error it threw) back. The runtime arrives
 * once in `workerData`; a reloaded policy arrives with the first job decided under it.
 */

/** Buffers arrive as Uint8Arrays: the key's raw bytes become a Buffer again (key ids and JWKs read them as one). */
function reviveKey<K extends VerifyKey>(k: K): K {
  const raw = k.publicRaw as Uint8Array;
  return { ...k, publicRaw: Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength) };
}

const given = workerData as CallDecisionConfig;
const cfg: CallDecisionConfig = {
  ...given,
  runtime: { ...given.runtime, signingKey: reviveKey(given.runtime.signingKey) },
  approvalKeys: given.approvalKeys.map(reviveKey),
};
const port = parentPort!;

answerCalls<ToWorker>(port, (msg) => {
  if (msg.policy) cfg.runtime.policy = msg.policy;
  const { call, correlationId, opts, killSwitch } = msg.job;
  return decideSignedCall(cfg, call, correlationId, opts, killSwitch);
});
