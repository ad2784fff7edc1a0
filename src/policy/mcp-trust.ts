import { restrictingAction } from './constraints.js';
import { DurationError, formatGoDuration, goTrim, parseGoDuration, uniqueSortedLower } from '../canon/index.js';
import { invalidPolicy } from './invalid.js';
import type { RawPolicy } from './schema.js';
import type { McpTrustConfig } from './types.js';
import { DEFAULT_HIGH_RISK_CLASSES } from './vocabulary.js';

const NANOS_PER_SECOND = 1_000_000_000n;

/**
 * `mcp_trust` (`gate.md` §2.2): any key turns it on and then a snapshot is required. `gate eval`
 * only validates and digests it; the MCP proxy enforces it.
 */
export function normalizeMcpTrust(raw: RawPolicy['mcp_trust']): McpTrustConfig {
  const configured =
    raw.enabled ||
    goTrim(raw.snapshot) !== '' ||
    goTrim(raw.action) !== '' ||
    raw.required_risk_classes.length > 0 ||
    raw.min_score !== 0 ||
    goTrim(raw.max_age) !== '' ||
    raw.publisher_allowlist.length > 0 ||
    raw.require_registry;
  if (!configured) {
    return {
      enabled: false,
      snapshot: '',
      action: 'block',
      required_risk_classes: [],
      min_score: 0,
      max_age: '',
      max_age_seconds: 0,
      publisher_allowlist: [],
      require_registry: false,
    };
  }
  const snapshot = goTrim(raw.snapshot);
  if (snapshot === '') throw invalidPolicy('mcp_trust.snapshot is required when mcp_trust is configured');
  const action = restrictingAction(raw.action, 'block', (q) => `unsupported mcp_trust.action ${q}`);
  // Written as a negation so that NaN (`.nan`) is out of range too.
  if (!(raw.min_score >= 0 && raw.min_score <= 1)) throw invalidPolicy('mcp_trust.min_score must be between 0 and 1');
  const maxAge = normalizeMaxAge(raw.max_age);
  const riskClasses = uniqueSortedLower(raw.required_risk_classes);
  return {
    enabled: true,
    snapshot,
    action: action as McpTrustConfig['action'],
    required_risk_classes: riskClasses.length > 0 ? riskClasses : [...DEFAULT_HIGH_RISK_CLASSES],
    min_score: raw.min_score,
    max_age: maxAge.text,
    max_age_seconds: maxAge.seconds,
    publisher_allowlist: uniqueSortedLower(raw.publisher_allowlist),
    require_registry: raw.require_registry,
  };
}

function normalizeMaxAge(value: string): { text: string; seconds: number } {
  const trimmed = goTrim(value);
  if (trimmed === '') return { text: '', seconds: 0 };
  let nanos: bigint;
  try {
    nanos = parseGoDuration(trimmed);
  } catch (err) {
    if (err instanceof DurationError) throw invalidPolicy(`parse mcp_trust.max_age: ${err.message}`);
    throw err;
  }
  if (nanos <= 0n) throw invalidPolicy('mcp_trust.max_age must be > 0');
  const whole = nanos / NANOS_PER_SECOND;
  const fraction = Number(nanos % NANOS_PER_SECOND) / 1e9;
  return { text: formatGoDuration(nanos), seconds: Number(whole) + fraction };
}
