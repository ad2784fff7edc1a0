import { readFileSync } from 'node:fs';
import { parseRFC3339, type JsonObject } from '../../src/canon/index.js';
import type { NormalizedIntent } from '../../src/intent/types.js';
import { makeIntent, v1Intent } from '../context/helpers.js';
import type { TraceInput } from '../../src/trace/index.js';
import { parsePrivateKey, parsePublicKey, type SigningKey, type VerifyKey } from '../../src/keys/index.js';

export function repoFile(path: string): string {
  return readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
}

/** The V7 signing key (seed 0x01..0x20): public in the spec, a test fixture only. */
export function v7SigningKey(): SigningKey {
  return parsePrivateKey(repoFile('fixtures/keys/v7_TEST_ONLY_private.key'));
}

export function v7PublicKey(): VerifyKey {
  return parsePublicKey(repoFile('keys/v7_public.key'));
}

export const V7_TRACE_TEXT = repoFile('fixtures/traces/v7-reference-trace.json');

/** A hand-built normalized intent (shared with the context tests). */
export const intent = makeIntent;

/** The V7 prepared intent (`gate.md` §11 V7): V1 with the context derived from the envelope. */
export function v7Intent(): NormalizedIntent {
  return v1Intent({
    auth_context: { context_age_seconds: 3659 } as JsonObject,
    context_set_digest: '793f36e5bd721ca7a293f211a10b3cb51f789445429848aaa16e0414eab8128f',
    context_evidence_mode: 'required',
    context_refs: ['ctx-a', 'ctx-b'],
  });
}

export const V7_POLICY_DIGEST = 'a94ac865a8477f9a9552ea35524d820fccced3b73199d68d5661801050146666';
export const V7_INTENT_DIGEST = '5a851409b8a555437e75559fdae924b969b53b3e9d5dce1806ac4e005ebd8d2b';

/** The inputs of the V7 evaluation, as the gate hands them to the trace builder. */
export function v7TraceInput(): TraceInput {
  return {
    intent: v7Intent(),
    argsDigest: '3ce5713f41f9b6812880cac570b0f8ce318c7afff371873f241884729e518370',
    intentDigest: V7_INTENT_DIGEST,
    policyDigest: V7_POLICY_DIGEST,
    policyId: 'gait.gate.policy',
    policyVersion: '1.0.0',
    verdict: 'block',
    reasonCodes: ['context_freshness_exceeded', 'matched_rule_allow_with_context_proof'],
    violations: ['context_freshness_violation'],
    matchedRule: 'allow-with-context-proof',
    createdAt: parseRFC3339('2026-02-18T00:00:00Z'),
    observedAt: parseRFC3339('2026-11-21T21:11:28.455778037Z'),
    producerVersion: '0.0.0-dev',
    correlationId: 'abc',
    latencyMs: 1.25,
    context: {
      contextSetDigest: '793f36e5bd721ca7a293f211a10b3cb51f789445429848aaa16e0414eab8128f',
      contextEvidenceMode: 'required',
      contextRefCount: 2,
      contextSource: 'context_envelope',
    },
  };
}
