import { ERROR_CODES, WardError } from '../errors.js';
import type { NormalizedPolicy } from './types.js';

export type PolicyProfile = 'standard' | 'oss-prod';

/**
 * The `oss-prod` profile's policy requirements (`gate.md` §2.5): nothing is allowed by default,
 * and a rule that can let a high-risk call through must demand a brokered credential.
 */
export function checkProfile(policy: NormalizedPolicy, profile: PolicyProfile): void {
  if (profile !== 'oss-prod') return;
  if (policy.default_verdict === 'allow') {
    throw profileError('oss-prod profile rejects policy default_verdict=allow; use default_verdict: block or require_approval');
  }
  for (const rule of policy.rules) {
    if (rule.effect === 'block' || rule.require_broker_credential) continue;
    if (rule.match.risk_classes.some((c) => c === 'high' || c === 'critical')) {
      throw profileError('oss-prod profile requires high-risk allow/approval rules to set require_broker_credential: true');
    }
  }
}

function profileError(message: string): WardError {
  return new WardError(ERROR_CODES.POLICY_PROFILE, message);
}
