import { goLower, goTrim, isJsonObject } from '../canon/index.js';
import type { ResultRecord } from '../runpack/index.js';

/** A verdict as regress compares it: the four gate verdicts, or `error` for a result that says none. */
export type RegressVerdict = 'allow' | 'block' | 'require_approval' | 'dry_run' | 'error';

const ALIASES: Record<string, RegressVerdict> = {
  allow: 'allow',
  ok: 'allow',
  pass: 'allow',
  passed: 'allow',
  success: 'allow',
  block: 'block',
  blocked: 'block',
  deny: 'block',
  denied: 'block',
  require_approval: 'require_approval',
  approval_required: 'require_approval',
  needs_approval: 'require_approval',
  dry_run: 'dry_run',
  'dry-run': 'dry_run',
  dryrun: 'dry_run',
  simulate: 'dry_run',
  simulated: 'dry_run',
  error: 'error',
};

/** A verdict or status word, normalized; undefined when it names none. */
export function normalizeVerdict(text: string): RegressVerdict | undefined {
  return ALIASES[goLower(goTrim(text))];
}

/** §5.3 trajectory: the result payload's `verdict` when it normalizes, else one from `status`, else `error`. */
export function resultVerdict(result: ResultRecord): RegressVerdict {
  const payload = result.result;
  const stated = isJsonObject(payload) && typeof payload['verdict'] === 'string' ? normalizeVerdict(payload['verdict']) : undefined;
  if (stated && stated !== 'error') return stated;
  const fromStatus = normalizeVerdict(result.status);
  return fromStatus ?? 'error';
}
