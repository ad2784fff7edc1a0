import { goCleanPath, goLower, goTrim, oneOfHint, uniqueSorted, uniqueSortedLower } from '../canon/index.js';
import { hostEntryProblem } from '../intent/address.js';
import { isEnvAssignment } from '../intent/secrets.js';
import { goQuote } from './go-quote.js';
import { invalidPolicy } from './invalid.js';
import type { RawRateLimit, RawRule } from './schema.js';
import type {
  DataflowConfig,
  EndpointConfig,
  FreezeWindowConfig,
  RateLimitConfig,
  RateScope,
  RateWindow,
  SandboxConfig,
  Verdict,
} from './types.js';
import {
  DEFAULT_TAINTED_SOURCES,
  ENDPOINT_CLASSES,
  RATE_SCOPES,
  RATE_WINDOWS,
  RESTRICTING_ACTIONS,
  SANDBOX_ENV_EXPOSURE_MODES,
  SANDBOX_FILESYSTEM_ISOLATIONS,
  SANDBOX_NETWORK_MODES,
  SANDBOX_USER_MODES,
} from './vocabulary.js';

/**
 * The per-rule constraint blocks (`gate.md` §2.3). Each turns itself on from its own keys, fills
 * its defaults, and validates only when on: a block that is off is never evaluated nor digested.
 */

export function normalizeFreezeWindow(raw: RawRule['freeze_window'], rule: string): FreezeWindowConfig {
  const enabled =
    raw.enabled ||
    goTrim(raw.timezone) !== '' ||
    goTrim(raw.effect) !== '' ||
    goTrim(raw.reason) !== '' ||
    raw.environments.length > 0 ||
    raw.risk_classes.length > 0 ||
    raw.windows.length > 0;
  if (!enabled) {
    return { enabled: false, timezone: '', effect: 'block', reason: '', environments: [], risk_classes: [], windows: [] };
  }
  // The zone is resolved at evaluation time; an unknown zone blocks there (freeze_window_invalid_timezone).
  const timezone = goTrim(raw.timezone);
  if (timezone === '') throw invalidPolicy(`freeze_window.timezone is required for ${rule}`);
  const effect = restrictingAction(raw.effect, 'block', (q) => `unsupported freeze_window.effect ${q} for ${rule}`);
  if (raw.windows.length === 0) throw invalidPolicy(`freeze_window.windows is required for ${rule}`);
  const windows = raw.windows.map((w, i) => {
    const start = goTrim(w.start);
    const end = goTrim(w.end);
    if (start === '' || end === '') throw invalidPolicy(`freeze_window window start and end are required for ${rule}`);
    return { name: goTrim(w.name) || `window-${i + 1}`, start, end };
  });
  return {
    enabled: true,
    timezone,
    effect,
    reason: goTrim(raw.reason),
    environments: uniqueSortedLower(raw.environments),
    risk_classes: uniqueSortedLower(raw.risk_classes),
    windows,
  };
}

export function normalizeSandbox(raw: RawRule['sandbox'], rule: string): SandboxConfig {
  const enabled =
    raw.enabled ||
    raw.allowed_network_modes.length > 0 ||
    raw.allowed_writable_path_prefixes.length > 0 ||
    raw.required_read_only_roots.length > 0 ||
    raw.allowed_env_exposure_modes.length > 0 ||
    raw.max_timeout_seconds !== 0 ||
    raw.allowed_filesystem_isolations.length > 0 ||
    raw.allowed_user_modes.length > 0;
  if (!enabled) {
    return {
      enabled: false,
      allowed_network_modes: [],
      allowed_writable_path_prefixes: null,
      required_read_only_roots: null,
      allowed_env_exposure_modes: [],
      max_timeout_seconds: 0,
      allowed_filesystem_isolations: [],
      allowed_user_modes: [],
    };
  }
  const allowedNetworkModes = enumList(raw.allowed_network_modes, SANDBOX_NETWORK_MODES, (q) => `unsupported sandbox.allowed_network_mode ${q} for ${rule}`);
  const writable = sandboxPaths(raw.allowed_writable_path_prefixes, 'sandbox.allowed_writable_path_prefixes', rule);
  const readOnly = sandboxPaths(raw.required_read_only_roots, 'sandbox.required_read_only_roots', rule);
  const envModes = enumList(raw.allowed_env_exposure_modes, SANDBOX_ENV_EXPOSURE_MODES, (q) => `unsupported sandbox.allowed_env_exposure_mode ${q} for ${rule}`);
  if (raw.max_timeout_seconds < 0) throw invalidPolicy(`sandbox.max_timeout_seconds must be >= 0 for ${rule}`);
  const isolations = enumList(raw.allowed_filesystem_isolations, SANDBOX_FILESYSTEM_ISOLATIONS, (q) => `unsupported sandbox.allowed_filesystem_isolation ${q} for ${rule}`);
  const userModes = enumList(raw.allowed_user_modes, SANDBOX_USER_MODES, (q) => `unsupported sandbox.allowed_user_mode ${q} for ${rule}`);
  return {
    enabled: true,
    allowed_network_modes: allowedNetworkModes,
    allowed_writable_path_prefixes: writable,
    required_read_only_roots: readOnly,
    allowed_env_exposure_modes: envModes,
    max_timeout_seconds: raw.max_timeout_seconds,
    allowed_filesystem_isolations: isolations,
    allowed_user_modes: userModes,
  };
}

/**
 * Sandbox path lists use the intent sandbox's normalizer: cleaned, "." dropped, deduped, sorted,
 * and `null` rather than `[]` when empty (which the digest shows, `gate.md` §2.6). A raw
 * environment assignment (`TOKEN=...`) is rejected: it is secret material, not a path.
 */
function sandboxPaths(values: readonly string[], field: string, rule: string): string[] | null {
  const out = new Set<string>();
  for (const value of values) {
    const trimmed = goTrim(value);
    if (trimmed === '') continue;
    if (isEnvAssignment(trimmed)) {
      throw invalidPolicy(`${field} must not contain raw environment variable assignments for ${rule}`);
    }
    const cleaned = goCleanPath(trimmed);
    if (cleaned !== '.') out.add(cleaned);
  }
  return out.size === 0 ? null : uniqueSorted([...out]);
}

export function normalizeRateLimit(raw: RawRateLimit, rule: string): RateLimitConfig {
  if (raw.requests < 0) throw invalidPolicy(`rate_limit.requests must be >= 0 for ${rule}`);
  if (raw.requests === 0) return { requests: 0, window: 'minute', scope: 'tool_identity' };
  return { requests: raw.requests, ...windowAndScope(raw, 'rate_limit', rule) };
}

/** Unlike rate_limit, writing any destructive_budget key means "limit": 0 requests is an error. */
export function normalizeDestructiveBudget(raw: RawRateLimit, rule: string): RateLimitConfig {
  const configured = raw.requests !== 0 || goTrim(raw.window) !== '' || goTrim(raw.scope) !== '';
  if (!configured) return { requests: 0, window: 'minute', scope: 'tool_identity' };
  if (raw.requests < 0) throw invalidPolicy(`destructive_budget.requests must be >= 0 for ${rule}`);
  if (raw.requests < 1) throw invalidPolicy(`destructive_budget.requests must be >= 1 for ${rule}`);
  return { requests: raw.requests, ...windowAndScope(raw, 'destructive_budget', rule) };
}

function windowAndScope(raw: RawRateLimit, field: string, rule: string): { window: RateWindow; scope: RateScope } {
  const window = goLower(goTrim(raw.window)) || 'minute';
  if (!RATE_WINDOWS.has(window)) throw invalidPolicy(`unsupported ${field}.window ${goQuote(window)} for ${rule}`);
  const scope = goLower(goTrim(raw.scope)) || 'tool_identity';
  if (!RATE_SCOPES.has(scope)) throw invalidPolicy(`unsupported ${field}.scope ${goQuote(scope)} for ${rule}`);
  return { window: window as RateWindow, scope: scope as RateScope };
}

export function normalizeDataflow(raw: RawRule['dataflow'], rule: string): DataflowConfig {
  const enabled =
    raw.enabled ||
    raw.tainted_sources.length > 0 ||
    raw.destination_kinds.length > 0 ||
    raw.destination_values.length > 0 ||
    raw.destination_operations.length > 0;
  const tainted = uniqueSortedLower(raw.tainted_sources);
  const config: DataflowConfig = {
    enabled,
    tainted_sources: tainted.length > 0 ? tainted : [...DEFAULT_TAINTED_SOURCES],
    destination_kinds: uniqueSortedLower(raw.destination_kinds),
    destination_values: uniqueSorted(raw.destination_values),
    destination_operations: uniqueSortedLower(raw.destination_operations),
    action: 'require_approval',
    reason_code: goTrim(raw.reason_code) || 'dataflow_tainted_destination',
    violation: goTrim(raw.violation) || 'tainted_dataflow',
  };
  if (!enabled) return config;
  config.action = restrictingAction(raw.action, 'require_approval', (q) => `unsupported dataflow.action ${q} for ${rule}`);
  return config;
}

export function normalizeEndpoint(raw: RawRule['endpoint'], rule: string): EndpointConfig {
  const enabled =
    raw.enabled ||
    raw.path_allowlist.length > 0 ||
    raw.path_denylist.length > 0 ||
    raw.domain_allowlist.length > 0 ||
    raw.domain_denylist.length > 0 ||
    raw.egress_classes.length > 0 ||
    goTrim(raw.destructive_action) !== '';
  const egress = uniqueSortedLower(raw.egress_classes);
  const config: EndpointConfig = {
    enabled,
    path_allowlist: uniqueSorted(raw.path_allowlist),
    path_denylist: uniqueSorted(raw.path_denylist),
    domain_allowlist: uniqueSortedLower(raw.domain_allowlist),
    domain_denylist: uniqueSortedLower(raw.domain_denylist),
    egress_classes: egress,
    action: 'block',
    destructive_action: '',
    reason_code: goTrim(raw.reason_code) || 'endpoint_constraint_violation',
    violation: goTrim(raw.violation) || 'endpoint_constraint_violation',
  };
  if (!enabled) return config;
  for (const cls of egress) {
    if (!ENDPOINT_CLASSES.has(cls)) throw invalidPolicy(`unsupported endpoint.egress_class ${goQuote(cls)} for ${rule}`, oneOfHint(cls, ENDPOINT_CLASSES));
    if (!cls.startsWith('net.')) throw invalidPolicy(`endpoint.egress_class must be network class for ${rule}`);
  }
  for (const list of ['domain_allowlist', 'domain_denylist'] as const) {
    for (const entry of config[list]) {
      const problem = hostEntryProblem(entry);
      if (problem !== undefined) throw invalidPolicy(`unsupported endpoint.${list} entry for ${rule}: ${problem}`);
    }
  }
  config.action = restrictingAction(raw.action, 'block', (q) => `unsupported endpoint.action ${q} for ${rule}`);
  const destructive = goLower(goTrim(raw.destructive_action));
  if (destructive !== '') {
    config.destructive_action = restrictingAction(destructive, 'block', (q) => `unsupported endpoint.destructive_action ${q} for ${rule}`);
  }
  return config;
}

/** A lowercased `block` / `require_approval` with a default; the message gets the Go-quoted value. */
export function restrictingAction(value: string, fallback: Verdict, message: (quoted: string) => string): Verdict {
  const action = goLower(goTrim(value)) || fallback;
  if (!RESTRICTING_ACTIONS.has(action)) throw invalidPolicy(message(goQuote(action)));
  return action as Verdict;
}

export function enumList(values: readonly string[], allowed: ReadonlySet<string>, message: (quoted: string) => string): string[] {
  const list = uniqueSortedLower(values);
  for (const value of list) {
    if (!allowed.has(value)) throw invalidPolicy(message(goQuote(value)));
  }
  return list;
}
