import { createHash, verify, type KeyObject } from 'node:crypto';
import { nowUTC, parseRFC3339, type GoTime, type JsonObject } from '../../src/canon/index.js';
import type { SigningKey } from '../../src/keys/index.js';
import { mintApprovalToken, validateApprovalToken, type ApprovalBinding, type MintApprovalOptions } from '../../src/tokens/index.js';

/** Canonical JSON for plain token data, written independently of Ward's JCS (sorted keys, JSON scalars). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The reference construction (`gate.md` §6.2) checked directly with node:crypto. */
export function referenceVerify(signed: JsonObject, publicKey: KeyObject): boolean {
  const { signature, ...rest } = signed as JsonObject & { signature: { sig: string; signed_digest: string } };
  const digest = createHash('sha256').update(canonical(rest)).digest();
  return digest.toString('hex') === signature.signed_digest && verify(null, digest, publicKey, Buffer.from(signature.sig, 'base64'));
}

export const HOUR = 3_600_000_000_000n;
export const T0: GoTime = parseRFC3339('2026-03-12T12:00:00.123456789Z');
export const INTENT_DIGEST = '4b53bb79e35105ac9170963ac6f84ed0ed15530c68f06a46fc1233c5ec766913';
export const POLICY_DIGEST = '07a528a879e4f0e0cd5a0e2ca801924746b47dac624862207ef21d4ec266f8f9';

/**
 * Approval-token fixtures for one signing key: `mint` a token for INTENT_DIGEST/POLICY_DIGEST, a
 * `binding` that token satisfies, and `codeOf`, the validation result code ('ok' when valid).
 */
export function approvalFixtures(key: SigningKey) {
  const mint = (overrides: Partial<MintApprovalOptions> = {}): JsonObject =>
    mintApprovalToken({
      intentDigest: INTENT_DIGEST,
      policyDigest: POLICY_DIGEST,
      ttlNs: HOUR,
      scope: ['tool:tool.write'],
      approver: 'alice',
      reasonCode: 'change_ticket_42',
      now: nowUTC(),
      producerVersion: '0.1.0',
      key,
      ...overrides,
    });
  const binding = (overrides: Partial<ApprovalBinding> = {}): ApprovalBinding => ({
    verifyKeys: [key],
    intentDigest: INTENT_DIGEST,
    policyDigest: POLICY_DIGEST,
    requiredScope: ['tool:tool.write'],
    targetCount: 1,
    opCount: 1,
    now: nowUTC(),
    ...overrides,
  });
  const codeOf = (token: unknown, b: ApprovalBinding = binding()): string => {
    const result = validateApprovalToken(token as JsonObject, b);
    return result.ok ? 'ok' : result.code;
  };
  return { mint, binding, codeOf };
}
