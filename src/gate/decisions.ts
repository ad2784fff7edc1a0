import { ZERO_TIME, formatRFC3339Nano, type GoTime, type JsonObject } from '../canon/index.js';
import type { Verdict } from '../policy/types.js';
import { verdictRank } from './verdict.js';

/** Freeze-window decision (`gate.md` §3.3f, trace shape §6.1). */
export interface FreezeWindowDecision {
  status: 'inactive' | 'active' | 'invalid';
  effect: Verdict;
  timezone: string;
  evaluated_at: GoTime;
  window_name: string;
  window_start: GoTime;
  window_end: GoTime;
  reason: string;
  reason_code: string;
}

/** Sandbox decision (`gate.md` §3.3g, trace shape §6.1). */
export interface SandboxDecision {
  status: 'valid' | 'missing' | 'disallowed' | 'invalid';
  network_mode: string;
  env_exposure_mode: string;
  timeout_seconds: number;
  filesystem_isolation: string;
  user_mode: string;
  evidence_ref: string;
  evidence_digest: string;
  reason_codes: string[];
}

export function inactiveFreezeDecision(effect: Verdict, timezone: string, at: GoTime): FreezeWindowDecision {
  return {
    status: 'inactive',
    effect,
    timezone,
    evaluated_at: at,
    window_name: '',
    window_start: ZERO_TIME,
    window_end: ZERO_TIME,
    reason: '',
    reason_code: '',
  };
}

const FREEZE_STATUS_RANK = { invalid: 2, active: 1, inactive: 0 } as const;
const SANDBOX_STATUS_RANK = { missing: 3, disallowed: 2, invalid: 1, valid: 0 } as const;

/** Pick the decision to report when several rules produced one: invalid > active > inactive, block > approval, smaller name. */
export function pickFreezeDecision(a: FreezeWindowDecision | undefined, b: FreezeWindowDecision): FreezeWindowDecision {
  if (!a) return b;
  const byStatus = FREEZE_STATUS_RANK[b.status] - FREEZE_STATUS_RANK[a.status];
  if (byStatus !== 0) return byStatus > 0 ? b : a;
  const byEffect = verdictRank(b.effect) - verdictRank(a.effect);
  if (byEffect !== 0) return byEffect > 0 ? b : a;
  return b.window_name < a.window_name ? b : a;
}

/** missing > disallowed > invalid > valid, then the smaller evidence digest. */
export function pickSandboxDecision(a: SandboxDecision | undefined, b: SandboxDecision): SandboxDecision {
  if (!a) return b;
  const byStatus = SANDBOX_STATUS_RANK[b.status] - SANDBOX_STATUS_RANK[a.status];
  if (byStatus !== 0) return byStatus > 0 ? b : a;
  return b.evidence_digest < a.evidence_digest ? b : a;
}

/** Go-marshalled JSON: time fields always present, everything else omitempty. */
export function freezeDecisionJson(d: FreezeWindowDecision): JsonObject {
  const out: JsonObject = {
    status: d.status,
    evaluated_at: formatRFC3339Nano(d.evaluated_at),
    window_start: formatRFC3339Nano(d.window_start),
    window_end: formatRFC3339Nano(d.window_end),
  };
  if (d.effect) out['effect'] = d.effect;
  if (d.timezone) out['timezone'] = d.timezone;
  if (d.window_name) out['window_name'] = d.window_name;
  if (d.reason) out['reason'] = d.reason;
  if (d.reason_code) out['reason_code'] = d.reason_code;
  return out;
}

export function sandboxDecisionJson(d: SandboxDecision): JsonObject {
  const out: JsonObject = { status: d.status };
  if (d.network_mode) out['network_mode'] = d.network_mode;
  if (d.env_exposure_mode) out['env_exposure_mode'] = d.env_exposure_mode;
  if (d.timeout_seconds) out['timeout_seconds'] = d.timeout_seconds;
  if (d.filesystem_isolation) out['filesystem_isolation'] = d.filesystem_isolation;
  if (d.user_mode) out['user_mode'] = d.user_mode;
  if (d.evidence_ref) out['evidence_ref'] = d.evidence_ref;
  if (d.evidence_digest) out['evidence_digest'] = d.evidence_digest;
  if (d.reason_codes.length) out['reason_codes'] = [...d.reason_codes];
  return out;
}
