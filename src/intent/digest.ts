import { digestJcs, formatRFC3339Nano, jcs, sha256Hex, type JsonObject } from '../canon/index.js';
import type {
  AgentIdentity,
  ArgProvenance,
  Delegation,
  IntentContext,
  NormalizedIntent,
  SandboxContext,
  ScriptStep,
  SkillProvenance,
  Target,
} from './types.js';
import { CONTEXT_PLAIN_STRING_FIELDS } from './types.js';

/*
 * The JSON values Go's encoding/json emits for the normalized intent (`gate.md` §1.6): omitempty
 * everywhere except time fields, which are always written (zero as 0001-01-01T00:00:00Z).
 */

export function targetPayload(t: Target): JsonObject {
  const out: JsonObject = { kind: t.kind, value: t.value };
  if (t.operation) out['operation'] = t.operation;
  if (t.sensitivity) out['sensitivity'] = t.sensitivity;
  if (t.endpoint_class) out['endpoint_class'] = t.endpoint_class;
  if (t.endpoint_domain) out['endpoint_domain'] = t.endpoint_domain;
  if (t.destructive) out['destructive'] = true;
  if (t.discovery_method) out['discovery_method'] = t.discovery_method;
  if (t.read_only_hint) out['read_only_hint'] = true;
  if (t.destructive_hint) out['destructive_hint'] = true;
  if (t.idempotent_hint) out['idempotent_hint'] = true;
  if (t.open_world_hint) out['open_world_hint'] = true;
  return out;
}

function provenancePayload(p: ArgProvenance): JsonObject {
  const out: JsonObject = { arg_path: p.arg_path, source: p.source };
  if (p.source_ref) out['source_ref'] = p.source_ref;
  if (p.integrity_digest) out['integrity_digest'] = p.integrity_digest;
  return out;
}

function skillPayload(s: SkillProvenance): JsonObject {
  const out: JsonObject = { skill_name: s.skill_name, source: s.source, publisher: s.publisher };
  if (s.skill_version) out['skill_version'] = s.skill_version;
  if (s.digest) out['digest'] = s.digest;
  if (s.signature_key_id) out['signature_key_id'] = s.signature_key_id;
  return out;
}

export function delegationPayload(d: Delegation): JsonObject {
  const out: JsonObject = {
    requester_identity: d.requester_identity,
    issued_at: formatRFC3339Nano(d.issued_at),
    expires_at: formatRFC3339Nano(d.expires_at),
  };
  if (d.scope_class) out['scope_class'] = d.scope_class;
  if (d.token_refs.length) out['token_refs'] = [...d.token_refs];
  if (d.chain.length) {
    out['chain'] = d.chain.map((link) => {
      const l: JsonObject = {
        delegator_identity: link.delegator_identity,
        delegate_identity: link.delegate_identity,
        issued_at: formatRFC3339Nano(link.issued_at),
        expires_at: formatRFC3339Nano(link.expires_at),
      };
      if (link.scope_class) l['scope_class'] = link.scope_class;
      if (link.token_ref) l['token_ref'] = link.token_ref;
      return l;
    });
  }
  return out;
}

export function agentIdentityPayload(a: AgentIdentity): JsonObject {
  const out: JsonObject = {
    issued_at: formatRFC3339Nano(a.issued_at),
    approved_at: formatRFC3339Nano(a.approved_at),
    expires_at: formatRFC3339Nano(a.expires_at),
  };
  if (a.lifecycle_states.length) out['lifecycle_states'] = [...a.lifecycle_states];
  if (a.owner) out['owner'] = a.owner;
  if (a.publisher) out['publisher'] = a.publisher;
  if (a.source) out['source'] = a.source;
  if (a.manifest_digest) out['manifest_digest'] = a.manifest_digest;
  if (a.revoked) out['revoked'] = true;
  return out;
}

function sandboxPayload(s: SandboxContext): JsonObject {
  const out: JsonObject = {};
  if (s.network_mode) out['network_mode'] = s.network_mode;
  if (s.env_exposure_mode) out['env_exposure_mode'] = s.env_exposure_mode;
  if (s.filesystem_isolation) out['filesystem_isolation'] = s.filesystem_isolation;
  if (s.user_mode) out['user_mode'] = s.user_mode;
  if (s.timeout_seconds) out['timeout_seconds'] = s.timeout_seconds;
  if (s.writable_paths.length) out['writable_paths'] = [...s.writable_paths];
  if (s.read_only_roots.length) out['read_only_roots'] = [...s.read_only_roots];
  if (s.evidence_ref) out['evidence_ref'] = s.evidence_ref;
  if (s.evidence_digest) out['evidence_digest'] = s.evidence_digest;
  return out;
}

export function contextPayload(c: IntentContext): JsonObject {
  const out: JsonObject = { identity: c.identity, workspace: c.workspace, risk_class: c.risk_class, phase: c.phase };
  for (const field of CONTEXT_PLAIN_STRING_FIELDS) if (c[field]) out[field] = c[field];
  if (c.credential_source) out['credential_source'] = c.credential_source;
  if (c.credential_access_type) out['credential_access_type'] = c.credential_access_type;
  if (c.credential_ttl_seconds) out['credential_ttl_seconds'] = c.credential_ttl_seconds;
  if (c.credential_scopes.length) out['credential_scopes'] = [...c.credential_scopes];
  if (c.agent_identity) out['agent_identity'] = agentIdentityPayload(c.agent_identity);
  if (c.sandbox) out['sandbox'] = sandboxPayload(c.sandbox);
  if (c.auth_context && Object.keys(c.auth_context).length) out['auth_context'] = c.auth_context;
  if (c.context_set_digest) out['context_set_digest'] = c.context_set_digest;
  if (c.context_evidence_mode) out['context_evidence_mode'] = c.context_evidence_mode;
  if (c.context_refs.length) out['context_refs'] = [...c.context_refs];
  return out;
}

function stepPayload(s: ScriptStep): JsonObject {
  const out: JsonObject = { tool_name: s.tool_name, args: s.args };
  if (s.targets.length) out['targets'] = s.targets.map(targetPayload);
  if (s.arg_provenance.length) out['arg_provenance'] = s.arg_provenance.map(provenancePayload);
  return out;
}

/** The object whose JCS digest is `intent_digest`. */
export function intentDigestPayload(intent: NormalizedIntent): JsonObject {
  return digestPayload(intent, true);
}

/**
 * `intentDigestPayload`, or (`withArgs` false) the same without `args` and `arg_provenance`, the
 * members JCS sorts first. Members are set in the order the payload has always had: decision
 * captures print it as it is.
 */
function digestPayload(intent: NormalizedIntent, withArgs: boolean): JsonObject {
  const out: JsonObject = { tool_name: intent.tool_name };
  if (withArgs) out['args'] = intent.args;
  out['targets'] = intent.targets.map(targetPayload);
  out['context'] = contextPayload(intent.context);
  if (intent.script) {
    out['script'] = { steps: intent.script.steps.map(stepPayload) };
    out['script_hash'] = intent.script_hash;
  }
  if (withArgs && intent.arg_provenance.length) out['arg_provenance'] = intent.arg_provenance.map(provenancePayload);
  if (intent.skill_provenance) out['skill_provenance'] = skillPayload(intent.skill_provenance);
  if (intent.delegation) out['delegation'] = delegationPayload(intent.delegation);
  return out;
}

export function intentDigest(intent: NormalizedIntent): string {
  return digestJcs(intentDigestPayload(intent));
}

export function argsDigest(intent: NormalizedIntent): string {
  return digestJcs(intent.args);
}

/**
 * `intentDigest` and `argsDigest` of one intent, its arguments canonicalized once: the intent
 * digest's payload holds the arguments, so its canonical text is composed around theirs (RFC 8785
 * sorts `arg_provenance` before `args` and every other member after). Arguments are free-form and
 * can be large; they were serialized twice per decision. Anything that cannot be canonicalized
 * goes the separate way, which throws exactly as `intentDigest` (first) and `argsDigest` do.
 */
export function subjectDigests(intent: NormalizedIntent): { intentDigest: string; argsDigest: string } {
  let argsText: string;
  let intentText: string;
  try {
    argsText = jcs(intent.args);
    intentText = intentDigestText(intent, argsText);
  } catch {
    return { intentDigest: intentDigest(intent), argsDigest: argsDigest(intent) };
  }
  return { intentDigest: sha256Hex(intentText), argsDigest: sha256Hex(argsText) };
}

/** jcs(intentDigestPayload(intent)), given jcs(intent.args). */
function intentDigestText(intent: NormalizedIntent, argsText: string): string {
  const provenance = intent.arg_provenance.length ? `"arg_provenance":${jcs(intent.arg_provenance.map(provenancePayload))},` : '';
  // The rest is never empty (tool_name, targets, context): its text is "{...}".
  return `{${provenance}"args":${argsText},${jcs(digestPayload(intent, false)).slice(1)}`;
}

export function scriptHashOf(steps: readonly ScriptStep[]): string {
  return digestJcs({ steps: steps.map(stepPayload) });
}

/** `credential_target_binding`: sha256(JCS(normalized targets)). */
export function targetsDigest(targets: readonly Target[]): string {
  return digestJcs(targets.map(targetPayload));
}

/** The delegation digest: trace `delegation_ref.chain_digest` and approval `delegation_binding_digest`. */
export function delegationDigest(delegation: Delegation): string {
  return digestJcs(delegationPayload(delegation));
}

/**
 * The normalized intent as a complete intent request: what Go's encoding/json writes for it, so
 * normalizing it again gives the same intent (and the same digest). Decision captures keep it.
 */
export function normalizedIntentJson(intent: NormalizedIntent): JsonObject {
  const out: JsonObject = {
    schema_id: intent.schema_id,
    schema_version: intent.schema_version,
    created_at: formatRFC3339Nano(intent.created_at),
    producer_version: intent.producer_version,
    ...intentDigestPayload(intent),
  };
  if (intent.relationship) out['relationship'] = intent.relationship;
  return out;
}
