import { parseRFC3339, type JsonObject, type JsonValue } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import type { CallTarget, ToolCall } from '../agent-hooks/tool-call.js';

export const INTENT_SCHEMA_ID = 'gait.gate.intent_request';
export const INTENT_SCHEMA_VERSION = '1.0.0';
export const DEFAULT_CREATED_AT = '1980-01-01T00:00:00Z';
export const DEFAULT_IDENTITY = 'mcp-proxy';
export const DEFAULT_WORKSPACE = '.';
export const DEFAULT_RISK_CLASS = 'high';

/** The reference warning when the standard profile filled in identity, workspace or session. */
export const FALLBACK_CONTEXT_WARNING =
  'standard profile applied fallback intent context; use --profile oss-prod for strict context enforcement';

export type Profile = 'standard' | 'oss-prod';

export interface IntentConversion {
  /** A `gait.gate.intent_request` 1.0.0 JSON object, ready for the gate normalizer. */
  intent: JsonObject;
  /** Identity, workspace or session_id was missing (and, for the first two, defaulted). */
  usedFallbackContext: boolean;
}

/** §6.2 `ToIntentRequestWithOptions`. */
export function toIntentRequest(call: ToolCall, profile: Profile): IntentConversion {
  const c = call.context;
  const identity = c.identity.trim();
  const workspace = c.workspace.trim();
  const sessionId = c.session_id.trim();
  if (profile === 'oss-prod' && (identity === '' || workspace === '' || sessionId === '')) {
    throw new WardError(
      ERROR_CODES.POLICY_PROFILE,
      'oss-prod profile requires call.context.identity, call.context.workspace and call.context.session_id',
      { hint: 'send the caller identity, workspace and session id in call.context, or use --profile standard' },
    );
  }

  const context: JsonObject = {
    identity: identity || DEFAULT_IDENTITY,
    workspace: workspace || DEFAULT_WORKSPACE,
    risk_class: c.risk_class.trim() || DEFAULT_RISK_CLASS,
  };
  const copy = (key: string, value: string) => {
    if (value.trim() !== '') context[key] = value.trim();
  };
  copy('phase', c.phase);
  copy('job_id', c.job_id);
  copy('session_id', sessionId);
  copy('request_id', c.request_id);
  copy('run_id', c.run_id);
  copy('environment_fingerprint', c.environment_fingerprint);
  copy('approval_ref', c.approval_ref);
  copy('traceparent', c.traceparent);
  if (c.credential_scopes.length > 0) context['credential_scopes'] = [...c.credential_scopes];
  const auth: JsonObject = { ...(c.auth_context ?? {}) };
  if (c.auth_mode.trim() !== '') auth['auth_mode'] = c.auth_mode.trim().toLowerCase();
  if (c.oauth_evidence && Object.keys(c.oauth_evidence).length > 0) auth['oauth_evidence'] = c.oauth_evidence;
  if (Object.keys(auth).length > 0) context['auth_context'] = auth;

  const intent: JsonObject = {
    schema_id: INTENT_SCHEMA_ID,
    schema_version: INTENT_SCHEMA_VERSION,
    created_at: call.createdAt.trim() || DEFAULT_CREATED_AT,
    producer_version: '0.0.0-dev',
  };
  if (call.script) {
    intent['tool_name'] = 'script';
    intent['args'] = {};
    intent['script'] = {
      steps: call.script.steps.map((s) => {
        const step: JsonObject = { tool_name: s.name, args: s.args };
        if (s.targets.length > 0) step['targets'] = s.targets.map(targetJson);
        if (s.argProvenance.length > 0) step['arg_provenance'] = s.argProvenance;
        return step;
      }),
    };
  } else {
    intent['tool_name'] = call.name;
    intent['args'] = call.args;
  }
  const targets = call.targets.map(targetJson);
  if (call.target !== '') targets.push({ kind: legacyTargetKind(call.target), value: call.target });
  if (targets.length > 0) intent['targets'] = targets;
  if (call.argProvenance.length > 0) intent['arg_provenance'] = call.argProvenance;
  intent['context'] = context;
  if (call.delegation) intent['delegation'] = call.delegation;
  return { intent, usedFallbackContext: identity === '' || workspace === '' || sessionId === '' };
}

/** Legacy `target` string: `url` when it contains `://`, `path` when it contains `/`, else `host`. */
export function legacyTargetKind(value: string): string {
  if (value.includes('://')) return 'url';
  if (value.includes('/')) return 'path';
  return 'host';
}

function targetJson(t: CallTarget): JsonObject {
  const out: JsonObject = { kind: t.kind, value: t.value };
  const put = (key: string, value: JsonValue) => {
    if (value !== '' && value !== false) out[key] = value;
  };
  put('operation', t.operation);
  put('sensitivity', t.sensitivity);
  put('discovery_method', t.discovery_method);
  put('read_only_hint', t.read_only_hint);
  put('destructive_hint', t.destructive_hint);
  put('idempotent_hint', t.idempotent_hint);
  put('open_world_hint', t.open_world_hint);
  if (t.endpoint_class !== undefined) put('endpoint_class', t.endpoint_class);
  return out;
}

const AUTH_MODES = new Set(['', 'off', 'none', 'token', 'oauth', 'oauth_dcr']);

/**
 * §6.3 step 3, OAuth evidence: `auth_mode` must be one of off|none|token|oauth|oauth_dcr; under
 * oss-prod an oauth mode needs complete evidence (and oauth_dcr the DCR client id and binding).
 */
export function validateAuthEvidence(call: ToolCall, profile: Profile): void {
  const mode = call.context.auth_mode.trim().toLowerCase();
  if (!AUTH_MODES.has(mode)) {
    throw new WardError(ERROR_CODES.USAGE, `unsupported context.auth_mode: ${mode}`, {
      hint: 'use off, none, token, oauth or oauth_dcr',
    });
  }
  if (profile !== 'oss-prod' || (mode !== 'oauth' && mode !== 'oauth_dcr')) return;
  const e = call.context.oauth_evidence ?? {};
  const required = ['issuer', 'audience', 'subject', 'client_id', 'token_type', 'scopes', 'redirect_uri', 'evidence_ref', 'auth_time'];
  if (mode === 'oauth_dcr') required.push('dcr_client_id', 'token_binding');
  const missing = required.filter((k) => e[k] === undefined);
  if (missing.length > 0) {
    throw new WardError(ERROR_CODES.POLICY_PROFILE, `oss-prod profile requires oauth_evidence fields for auth_mode ${mode}: ${missing.join(', ')}`, {
      hint: 'send complete context.oauth_evidence or use --profile standard',
    });
  }
  try {
    parseRFC3339(String(e['auth_time']));
  } catch {
    throw new WardError(ERROR_CODES.POLICY_PROFILE, 'oauth_evidence.auth_time must be RFC3339');
  }
}
