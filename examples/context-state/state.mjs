// A kgents-style typed context state: named slots, each a typed value with the provenance of how it
// was obtained, validated as a whole before anything is decided. Ward never sees the values: the
// state becomes a ContextSpec v1 envelope of digests, which the gate verifies and binds into the
// signed trace. docs/contextos-and-context-state.md has the field-by-field mapping.
import { z } from 'zod';
import { digestJcs } from 'ward';

/** Where a slot's value came from. */
const Source = z.strictObject({
  type: z.string().min(1),
  locator: z.string().min(1),
  retrieved_at: z.iso.datetime(),
  immutable: z.boolean().default(false),
});

const slot = (value) => z.strictObject({ value, source: Source });

/** The agent's context: who acts for whom, and what it knows (each slot typed). */
export const SupportState = z.strictObject({
  principal: z.strictObject({ agent: z.string().min(1), on_behalf_of: z.string().min(1), session: z.string().min(1) }),
  slots: z.strictObject({
    customer: slot(z.strictObject({ id: z.string(), tier: z.enum(['standard', 'gold', 'platinum']) })),
    order: slot(z.strictObject({ id: z.string(), amount_inr: z.number().int().nonnegative(), status: z.string() })),
    refund_policy: slot(z.strictObject({ id: z.string(), max_auto_refund_inr: z.number().int().nonnegative() })),
  }),
});

/**
 * The state as a ContextSpec v1 envelope: one record per slot. `query_digest` binds what was asked
 * for (the slot and where it was looked up), `content_digest` the value itself (its JCS digest), so
 * any change to a value changes the `context_set_digest` the gate derives and the trace records.
 */
export function contextEnvelopeOf(state, { contextSetId, createdAt }) {
  const records = Object.entries(state.slots).map(([name, { value, source }]) => ({
    ref_id: `state.${name}`,
    source_type: source.type,
    source_locator: source.locator,
    query_digest: digestJcs({ slot: name, locator: source.locator }),
    content_digest: digestJcs(value),
    retrieved_at: source.retrieved_at,
    redaction_mode: 'hashes',
    immutability: source.immutable ? 'immutable' : 'mutable',
  }));
  return {
    schema_id: 'gait.context.envelope',
    schema_version: '1.0.0',
    created_at: createdAt,
    producer_version: 'context-state-example',
    context_set_id: contextSetId,
    context_set_digest: '', // Ward computes it from the records (and checks it when given)
    evidence_mode: 'required',
    records,
  };
}

/** The intent's context from the state's principal: who acts, for whom, in which session. */
export function intentContextOf(state) {
  return {
    identity: state.principal.agent,
    session_id: state.principal.session,
    workspace: '/srv/support',
    risk_class: 'high',
    auth_context: { on_behalf_of: state.principal.on_behalf_of },
  };
}
