import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { EPOCH_1980, parseRFC3339, type GoTime, type JsonObject } from '../../src/canon/index.js';
import type { IntentContext, NormalizedIntent, Target } from '../../src/intent/types.js';

/*
 * Small hand-built normalized intents. normalizeIntent is written concurrently elsewhere, so these
 * tests construct the normalized shape directly (`gate.md` §1.2 defaults: "" for strings, [] for
 * lists, phase "apply", discovery_method "unknown").
 */

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export function fixture(relative: string): string {
  return readFileSync(new URL(`../../fixtures/${relative}`, import.meta.url), 'utf8');
}

export function t(text: string): GoTime {
  return parseRFC3339(text);
}

export function makeTarget(overrides: Partial<Target> = {}): Target {
  return {
    kind: 'path',
    value: '/tmp/x',
    operation: '',
    sensitivity: '',
    endpoint_class: 'fs.write',
    endpoint_domain: '',
    destructive: false,
    discovery_method: 'unknown',
    read_only_hint: false,
    destructive_hint: false,
    idempotent_hint: false,
    open_world_hint: false,
    ...overrides,
  };
}

export function makeContext(overrides: Partial<IntentContext> = {}): IntentContext {
  return {
    identity: 'agent.scenario',
    workspace: '/repo/gait',
    risk_class: 'high',
    phase: 'apply',
    agent_id: '',
    run_id: '',
    workflow_id: '',
    repo: '',
    environment: '',
    job_id: '',
    session_id: '',
    request_id: '',
    credential_ref: '',
    credential_issuer: '',
    credential_subject: '',
    credential_owner: '',
    credential_target_binding: '',
    credential_run_binding: '',
    credential_job_binding: '',
    approval_ref: '',
    wrkr_inventory_ref: '',
    agent_action_bom_ref: '',
    environment_fingerprint: '',
    credential_source: '',
    credential_access_type: '',
    credential_ttl_seconds: 0,
    credential_scopes: [],
    agent_identity: undefined,
    sandbox: undefined,
    auth_context: undefined,
    context_set_digest: '',
    context_evidence_mode: '',
    context_refs: [],
    ...overrides,
  };
}

export function makeIntent(
  overrides: Partial<Omit<NormalizedIntent, 'context'>> & { context?: Partial<IntentContext> } = {},
): NormalizedIntent {
  const { context, ...rest } = overrides;
  // The cast keeps these helpers independent of fields added to NormalizedIntent concurrently.
  return {
    schema_id: 'gait.gate.intent_request',
    schema_version: '1.0.0',
    created_at: EPOCH_1980,
    producer_version: 'test',
    tool_name: 'tool.write',
    args: {},
    targets: [],
    arg_provenance: [],
    skill_provenance: undefined,
    delegation: undefined,
    script: undefined,
    script_hash: '',
    relationship: undefined,
    trace_context: undefined,
    ...rest,
    context: makeContext(context),
  } as NormalizedIntent;
}

/** The normalized V1 intent (`gate.md` §11 V1): approval-token-valid scenario. */
export function v1Intent(context: Partial<IntentContext> = {}): NormalizedIntent {
  return makeIntent({
    tool_name: 'tool.write',
    created_at: t('2026-02-18T00:00:00Z'),
    args: { path: '/tmp/approve-valid.txt' },
    targets: [makeTarget({ value: '/tmp/approve-valid.txt', operation: 'write', endpoint_class: 'fs.write' })],
    arg_provenance: [{ arg_path: '$.path', source: 'user', source_ref: '', integrity_digest: '' }],
    context: { session_id: 'sess-tier11', ...context },
  });
}

/**
 * The intent_digest payload for the simple intents built here (no script, delegation, skill,
 * sandbox or agent identity), with Go's omitempty rules (`gate.md` §1.6). Enough to check the V7
 * prepared-intent vector byte for byte without depending on the concurrently written digest code.
 */
export function simpleIntentPayload(intent: NormalizedIntent): JsonObject {
  const c = intent.context;
  const context: JsonObject = { identity: c.identity, workspace: c.workspace, risk_class: c.risk_class, phase: c.phase };
  for (const key of ['session_id', 'agent_id', 'environment', 'context_set_digest', 'context_evidence_mode'] as const) {
    if (c[key] !== '') context[key] = c[key];
  }
  if (c.context_refs.length > 0) context['context_refs'] = [...c.context_refs];
  if (c.auth_context && Object.keys(c.auth_context).length > 0) context['auth_context'] = c.auth_context;
  const payload: JsonObject = {
    tool_name: intent.tool_name,
    args: intent.args,
    targets: intent.targets.map((target) => {
      const out: JsonObject = { kind: target.kind, value: target.value, discovery_method: target.discovery_method };
      if (target.operation) out['operation'] = target.operation;
      if (target.endpoint_class) out['endpoint_class'] = target.endpoint_class;
      return out;
    }),
    context,
  };
  if (intent.arg_provenance.length > 0) {
    payload['arg_provenance'] = intent.arg_provenance.map((p) => ({ arg_path: p.arg_path, source: p.source }));
  }
  return payload;
}
