import { declaredTargets } from '../intent/discover.js';
import { compareTime, isZeroTime, uniqueSorted, type GoTime } from '../canon/index.js';
import type { NormalizedIntent, PathView, Target } from '../intent/types.js';
import { targetsDigest } from '../intent/digest.js';
import { canonicalPaths, canonicalTarget, isAbsolutePath } from '../intent/canonical.js';
import type { DataflowConfig, EndpointConfig, FreezeWindowConfig, PolicyRule, SandboxConfig, Verdict } from '../policy/types.js';
import { deepPathMatch, goPathMatch, hasGlobMeta } from './glob.js';
import { inactiveFreezeDecision, type FreezeWindowDecision, type SandboxDecision } from './decisions.js';
import { isLoadableTimezone, parseLocalWallTime } from './timezone.js';
import { mostRestrictive } from './verdict.js';
import { resolvePathPattern, targetValueIn } from './target-match.js';
import { hostListAllows, hostListDenies, hostListNamesAddresses, targetOrigin, type TargetOrigin } from './host-list.js';
import { parseAddress, type ResolvedHosts } from '../intent/address.js';

/** What one constraint contributes to a rule evaluation. */
export interface Finding {
  reasons: string[];
  violations: string[];
}

const UNTARGETED_DATAFLOW_KINDS = new Set(['host', 'url', 'bucket', 'queue', 'topic']);

/** §3.3a: tainted provenance flowing to a destination. Returns undefined when it does not trigger. */
export function checkDataflow(cfg: DataflowConfig, intent: NormalizedIntent): Finding | undefined {
  if (!intent.arg_provenance.some((p) => cfg.tainted_sources.includes(p.source))) return undefined;
  const filtered = cfg.destination_kinds.length || cfg.destination_values.length || cfg.destination_operations.length;
  const workspace = intent.context.workspace;
  const hit = intent.targets.some((t) =>
    filtered
      ? (!cfg.destination_kinds.length || cfg.destination_kinds.includes(t.kind)) &&
        (!cfg.destination_values.length || targetValueIn(cfg.destination_values, t, workspace, intent.path_view)) &&
        (!cfg.destination_operations.length || cfg.destination_operations.includes(t.operation))
      : UNTARGETED_DATAFLOW_KINDS.has(t.kind),
  );
  return hit ? { reasons: [cfg.reason_code], violations: [cfg.violation] } : undefined;
}

/**
 * §3.3b: path/domain allow- and denylists, egress classes, destructive escalation. Lists are
 * matched against canonical targets (docs/canonical-targets.md); a target a list applies to but
 * that cannot be reduced to a canonical path or host fails the list closed. Where the host resolved
 * paths on the file system (`view`), every name of the file (symbolic links resolved, hard links
 * under denied roots) must pass the path lists, not only the spelled one.
 */
export function checkEndpoint(
  cfg: EndpointConfig,
  targets: readonly Target[],
  workspace: string,
  facts: EndpointFacts = NO_ENDPOINT_FACTS,
  view?: PathView,
): (Finding & { effect: Verdict }) | undefined {
  const codes: string[] = [];
  const pathLists = cfg.path_denylist.length > 0 || cfg.path_allowlist.length > 0;
  const domainLists = cfg.domain_denylist.length > 0 || cfg.domain_allowlist.length > 0;
  for (const t of targets) {
    const canonical = canonicalTarget(t, workspace, view);
    if (pathLists && (t.kind === 'path' || canonical.path !== '')) {
      const paths = canonicalPaths(canonical);
      if (paths.length === 0 || unanchoredPatterns(cfg, workspace)) codes.push('endpoint_target_not_canonical');
      else {
        const denied = (path: string) =>
          cfg.path_denylist.some((p) => {
            const pattern = resolvePathPattern(p, workspace);
            const real = view?.deniedPatterns.get(pattern);
            return pathDenied(pattern, path) || (real !== undefined && pathDenied(real, path));
          });
        const allowed = (path: string) => cfg.path_allowlist.some((p) => pathPatternMatches(resolvePathPattern(p, workspace), path));
        if (paths.some(denied)) codes.push('endpoint_path_denied');
        if (cfg.path_allowlist.length && !paths.every(allowed)) codes.push('endpoint_path_not_allowlisted');
      }
    }
    if (domainLists) {
      const host = canonical.host;
      if (host === undefined) codes.push('endpoint_target_not_canonical');
      else if (host !== '') checkHost(cfg, host, targetOrigin(t.kind, t.value, canonical.value), facts, codes);
    }
    if (t.endpoint_class.startsWith('net.') && cfg.egress_classes.length && !cfg.egress_classes.includes(t.endpoint_class)) {
      codes.push('endpoint_egress_class_not_allowed');
    }
  }
  let effect = cfg.action;
  const reasons = [...codes];
  const violations = [...codes];
  if (cfg.destructive_action !== '' && targets.some((t) => t.destructive)) {
    effect = mostRestrictive(effect, cfg.destructive_action);
    reasons.push('endpoint_destructive_operation');
    violations.push('destructive_operation');
  }
  if (reasons.length === 0) return undefined;
  reasons.push(cfg.reason_code);
  violations.push(cfg.violation);
  return { effect, reasons, violations };
}

/** What the host that evaluates knows beyond the intent: the addresses host names resolved to. */
export interface EndpointFacts {
  /** Undefined when no resolution was done (a library caller's pure evaluation): hosts are judged by their names. */
  readonly resolved?: ResolvedHosts | undefined;
  /** A fail-closed risk class: a name the lists need resolved and that did not resolve blocks. */
  readonly failClosed: boolean;
}

const NO_ENDPOINT_FACTS: EndpointFacts = { failClosed: false };

/**
 * The domain lists on one canonical host (host-list.ts). A host name is also judged by its
 * resolved addresses when a list names addresses, ranges or classes.
 */
function checkHost(cfg: EndpointConfig, host: string, origin: TargetOrigin | undefined, facts: EndpointFacts, codes: string[]): void {
  let resolved: readonly string[] = [];
  const needsAddresses =
    facts.resolved !== undefined &&
    parseAddress(host) === undefined &&
    (hostListNamesAddresses(cfg.domain_denylist) || hostListNamesAddresses(cfg.domain_allowlist));
  if (needsAddresses) {
    const r = facts.resolved!.get(host);
    if (r !== undefined && 'addresses' in r) resolved = r.addresses;
    else if (facts.failClosed) codes.push('endpoint_host_unresolved');
  }
  const denied = cfg.domain_denylist.length ? hostListDenies(cfg.domain_denylist, host, resolved) : undefined;
  if (denied === 'host') codes.push('endpoint_domain_denied');
  else if (denied === 'address') codes.push('endpoint_resolved_address_denied');
  if (cfg.domain_allowlist.length && !hostListAllows(cfg.domain_allowlist, host, resolved, origin)) codes.push('endpoint_domain_not_allowlisted');
}

/**
 * A relative pattern (`secrets/**`) names paths in the workspace; without an absolute workspace
 * (the MCP proxy with no `--workspace`) it cannot be placed, and a denylist that cannot be placed
 * must not pass anything: the list fails closed on every path target.
 */
function unanchoredPatterns(cfg: EndpointConfig, workspace: string): boolean {
  if (isAbsolutePath(workspace)) return false;
  const relative = (p: string) => !isAbsolutePath(p) && !p.startsWith('~');
  return cfg.path_denylist.some(relative) || cfg.path_allowlist.some(relative);
}

/**
 * A denylist entry denies what it names and everything under it: `/srv/secrets/*` denies
 * `/srv/secrets/a/b` because `/srv/secrets/a` is denied, and a directory's contents are never more
 * reachable than the directory.
 */
function pathDenied(pattern: string, path: string): boolean {
  const deep = pattern.includes('**');
  for (let p = path; ; ) {
    if (pathPatternMatches(pattern, p) || (deep && deepPathMatch(pattern, p))) return true;
    const slash = p.lastIndexOf('/');
    if (slash <= 0) return false;
    p = p.slice(0, slash);
  }
}

export function pathPatternMatches(pattern: string, path: string): boolean {
  if (pattern === path) return true;
  if (pattern.endsWith('/**')) {
    const prefix = pattern.slice(0, -3);
    return path === prefix || path.startsWith(prefix === '' ? '/' : prefix + '/');
  }
  return hasGlobMeta(pattern) && goPathMatch(pattern, path);
}

/** §3.3c on the prepared intent (claims already stripped or derived from a verified envelope). */
export function checkContextEvidence(rule: PolicyRule, intent: NormalizedIntent): Finding {
  const f: Finding = { reasons: [], violations: [] };
  const ctx = intent.context;
  if (ctx.context_set_digest === '') {
    f.reasons.push('context_evidence_missing', 'context_set_digest_missing');
    f.violations.push('missing_context_evidence');
  }
  if (rule.required_context_evidence_mode === 'required' && ctx.context_evidence_mode !== 'required') {
    f.reasons.push('context_evidence_mode_mismatch');
    f.violations.push('context_evidence_mode_violation');
  }
  if (rule.max_context_age_seconds > 0) {
    const age = contextAgeSeconds(ctx.auth_context?.['context_age_seconds']);
    if (age === undefined || age > rule.max_context_age_seconds) {
      f.reasons.push('context_freshness_exceeded');
      f.violations.push('context_freshness_violation');
    }
  }
  return f;
}

function contextAgeSeconds(value: unknown): number | undefined {
  if (typeof value === 'number') {
    if (Number.isInteger(value)) return value;
    return value >= 0 ? Math.trunc(value) : undefined;
  }
  if (typeof value === 'string' && /^[0-9]+$/.test(value.trim())) return Number(value.trim());
  return undefined;
}

/** §3.3d. */
export function checkAgentIdentity(rule: PolicyRule, intent: NormalizedIntent, now: GoTime): Finding {
  const f: Finding = { reasons: [], violations: [] };
  const add = (reason: string, violation = reason) => {
    f.reasons.push(reason);
    f.violations.push(violation);
  };
  const agentId = intent.context.agent_id;
  const identity = intent.context.agent_identity;
  if (rule.require_declared_agent && (agentId === '' || !identity)) add('agent_unknown', 'agent_identity_missing');
  if ((agentId !== '' && rule.denied_agent_ids.includes(agentId)) || identity?.revoked) add('agent_revoked');
  if (rule.allowed_agent_ids.length && !rule.allowed_agent_ids.includes(agentId)) add('agent_unknown', 'agent_not_declared');
  if (rule.require_agent_owner && !identity?.owner) add('agent_owner_missing');
  if (
    rule.required_agent_lifecycle_states.length &&
    !rule.required_agent_lifecycle_states.every((s) => identity?.lifecycle_states.includes(s))
  ) {
    add('agent_lifecycle_state_invalid');
  }
  if (rule.require_unexpired_agent && (!identity || isZeroTime(identity.expires_at) || compareTime(identity.expires_at, now) <= 0)) {
    add('agent_expired');
  }
  const manifestMismatch =
    (rule.required_agent_manifest_digest !== '' && identity?.manifest_digest !== rule.required_agent_manifest_digest) ||
    (rule.allowed_agent_manifest_publishers.length > 0 &&
      !rule.allowed_agent_manifest_publishers.includes((identity?.publisher ?? '').toLowerCase())) ||
    (rule.allowed_agent_manifest_sources.length > 0 && !rule.allowed_agent_manifest_sources.includes(identity?.source ?? ''));
  if (manifestMismatch) add('agent_manifest_mismatch');
  return f;
}

const STANDING_ACCESS_TYPES = new Set(['', 'cloud_admin', 'inherited', 'standing', 'static', 'unknown']);

/** §3.3e. Every code is also its own violation. */
export function checkCredentialPosture(rule: PolicyRule, intent: NormalizedIntent): Finding {
  const codes: string[] = [];
  const c = intent.context;
  if (c.credential_ref === '') codes.push('credential_evidence_missing');
  if (c.credential_source === '') codes.push('credential_source_unknown');
  if (c.credential_access_type === '') codes.push('credential_access_type_unknown');
  if (rule.require_jit_credential) {
    if (c.credential_access_type === '') codes.push('credential_evidence_missing');
    else if (c.credential_access_type !== 'jit') codes.push('credential_not_jit');
  }
  if (rule.block_standing_credentials && STANDING_ACCESS_TYPES.has(c.credential_access_type)) {
    codes.push('standing_credential_disallowed');
  }
  if (rule.allowed_credential_sources.length && !rule.allowed_credential_sources.includes(c.credential_source)) {
    codes.push('credential_source_disallowed');
  }
  if (rule.allowed_credential_issuers.length && !rule.allowed_credential_issuers.includes(c.credential_issuer)) {
    codes.push('credential_issuer_disallowed');
  }
  if (rule.allowed_credential_access_types.length && !rule.allowed_credential_access_types.includes(c.credential_access_type)) {
    codes.push('credential_access_type_disallowed');
  }
  if (rule.max_credential_ttl_seconds > 0) {
    if (c.credential_ttl_seconds <= 0) codes.push('credential_evidence_missing');
    else if (c.credential_ttl_seconds > rule.max_credential_ttl_seconds) codes.push('credential_ttl_exceeded');
  }
  if (c.credential_target_binding !== '' && c.credential_target_binding !== targetsDigest(declaredTargets(intent.targets))) {
    codes.push('credential_target_binding_mismatch');
  }
  if (c.credential_run_binding !== '' && c.run_id !== '' && c.credential_run_binding !== c.run_id) {
    codes.push('credential_run_binding_mismatch');
  }
  if (c.credential_job_binding !== '' && c.job_id !== '' && c.credential_job_binding !== c.job_id) {
    codes.push('credential_job_binding_mismatch');
  }
  const unique = uniqueSorted(codes);
  return { reasons: unique, violations: unique };
}

/** §3.3f. */
export function checkFreezeWindow(
  cfg: FreezeWindowConfig,
  intent: NormalizedIntent,
  now: GoTime,
): { decision: FreezeWindowDecision; code: string; effect: Verdict } {
  const decision = inactiveFreezeDecision(cfg.effect, cfg.timezone, now);
  const env = intent.context.environment.toLowerCase();
  if (cfg.environments.length && !cfg.environments.includes(env)) return { decision, code: '', effect: 'allow' };
  if (cfg.risk_classes.length && !cfg.risk_classes.includes(intent.context.risk_class)) return { decision, code: '', effect: 'allow' };
  if (!isLoadableTimezone(cfg.timezone)) {
    const code = 'freeze_window_invalid_timezone';
    return { decision: { ...decision, status: 'invalid', reason_code: code }, code, effect: 'block' };
  }
  for (const w of cfg.windows) {
    const start = parseLocalWallTime(w.start, cfg.timezone);
    const end = parseLocalWallTime(w.end, cfg.timezone);
    if (!start || !end || compareTime(end, start) <= 0) {
      const code = 'freeze_window_invalid_window';
      return { decision: { ...decision, status: 'invalid', window_name: w.name, reason_code: code }, code, effect: 'block' };
    }
    if (compareTime(now, start) >= 0 && compareTime(now, end) < 0) {
      const blocking = cfg.effect === 'block';
      const code = blocking ? 'freeze_window_active_block' : 'freeze_window_active_require_approval';
      return {
        decision: {
          ...decision,
          status: 'active',
          window_name: w.name,
          window_start: start,
          window_end: end,
          reason: cfg.reason !== '' ? cfg.reason : w.name,
          reason_code: code,
        },
        code,
        effect: blocking ? 'block' : 'require_approval',
      };
    }
  }
  return { decision, code: '', effect: 'allow' };
}

/** §3.3g. */
export function checkSandbox(cfg: SandboxConfig, intent: NormalizedIntent): SandboxDecision {
  const sb = intent.context.sandbox;
  if (!sb) {
    return {
      status: 'missing',
      network_mode: '',
      env_exposure_mode: '',
      timeout_seconds: 0,
      filesystem_isolation: '',
      user_mode: '',
      evidence_ref: '',
      evidence_digest: '',
      reason_codes: ['sandbox_metadata_missing'],
    };
  }
  const codes: string[] = [];
  if (sb.evidence_ref === '' || sb.evidence_digest === '') codes.push('sandbox_evidence_missing');
  const enumCheck = (allowed: readonly string[], value: string, name: string) => {
    if (!allowed.length) return;
    if (value === '') codes.push(`sandbox_${name}_missing`);
    else if (!allowed.includes(value)) codes.push(`sandbox_${name}_disallowed`);
  };
  enumCheck(cfg.allowed_network_modes, sb.network_mode, 'network_mode');
  enumCheck(cfg.allowed_env_exposure_modes, sb.env_exposure_mode, 'env_exposure_mode');
  if (cfg.max_timeout_seconds > 0) {
    if (sb.timeout_seconds <= 0) codes.push('sandbox_timeout_missing');
    else if (sb.timeout_seconds > cfg.max_timeout_seconds) codes.push('sandbox_timeout_exceeded');
  }
  enumCheck(cfg.allowed_filesystem_isolations, sb.filesystem_isolation, 'filesystem_isolation');
  enumCheck(cfg.allowed_user_modes, sb.user_mode, 'user_mode');
  const prefixes = cfg.allowed_writable_path_prefixes ?? [];
  if (prefixes.length && sb.writable_paths.some((p) => !prefixes.some((prefix) => underPrefix(p, prefix)))) {
    codes.push('sandbox_writable_path_disallowed');
  }
  const roots = cfg.required_read_only_roots ?? [];
  if (roots.length && !roots.every((r) => sb.read_only_roots.includes(r))) codes.push('sandbox_read_only_root_missing');
  const unique = uniqueSorted(codes);
  const status = unique.some((c) => c.endsWith('_missing'))
    ? 'missing'
    : unique.some((c) => c.endsWith('_disallowed') || c.endsWith('_exceeded'))
      ? 'disallowed'
      : unique.length
        ? 'invalid'
        : 'valid';
  return {
    status,
    network_mode: sb.network_mode,
    env_exposure_mode: sb.env_exposure_mode,
    timeout_seconds: sb.timeout_seconds,
    filesystem_isolation: sb.filesystem_isolation,
    user_mode: sb.user_mode,
    evidence_ref: sb.evidence_ref,
    evidence_digest: sb.evidence_digest,
    reason_codes: unique,
  };
}

/** Path-boundary prefix: equal, or equal up to the next `/`. */
export function underPrefix(path: string, prefix: string): boolean {
  if (path === prefix) return true;
  return path.startsWith(prefix.endsWith('/') ? prefix : prefix + '/');
}
