// An agent whose context is a typed state (kgents style) asks Ward to write a refund note. The
// state is validated, turned into a context envelope and bound to the intent; the policy allows
// the write only with that evidence, fresh. Runs offline; traces go to $WARD_STATE_DIR.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ward, intent, loadKeyRing, parseContextEnvelope, verifyTracePath } from 'ward';
import { contextEnvelopeOf, intentContextOf, SupportState } from './state.mjs';

const here = (name) => fileURLToPath(new URL(name, import.meta.url));
const stateDir = process.env.WARD_STATE_DIR || mkdtempSync(join(tmpdir(), 'ward-context-state-'));
const ward = new Ward({ policy: here('policy.yaml'), stateDir });

const state = SupportState.parse(JSON.parse(readFileSync(here('state.json'), 'utf8')));
const envelopeOf = (s) => contextEnvelopeOf(s, { contextSetId: `${s.principal.session}.state`, createdAt: '2026-05-03T09:30:05Z' });
const digestOf = (envelope) => parseContextEnvelope(JSON.stringify(envelope)).context_set_digest;

const writeNote = intent({
  tool_name: 'crm.write_note',
  args: { customer_id: state.slots.customer.value.id, note: 'refund of INR 4200 approved for ord_881' },
  targets: [{ kind: 'other', value: 'crm://customers/cus_204/notes', operation: 'write' }],
  context: intentContextOf(state),
});

async function decide(label, options) {
  const d = await ward.evaluate(writeNote, options);
  const trace = JSON.parse(readFileSync(d.tracePath, 'utf8'));
  console.log(`${label}: ${d.verdict} (${d.reasonCodes.join(', ')}) context_set_digest ${trace.context_set_digest ?? '-'}`);
  return trace;
}

const envelope = envelopeOf(state);
console.log(`state digest: ${digestOf(envelope)}`);
await decide('fresh state', { contextEnvelope: envelope, evaluationTime: '2026-05-03T09:31:00Z' });
await decide('stale state', { contextEnvelope: envelope, evaluationTime: '2026-05-03T12:31:00Z' });
await decide('no state', { evaluationTime: '2026-05-03T09:31:00Z' });

// A changed value is another context: the digest the trace binds changes with it.
const changed = structuredClone(state);
changed.slots.order.value.amount_inr = 42000;
console.log(`changed order amount -> state digest ${digestOf(envelopeOf(changed))}`);

// A state that does not type-check never reaches the gate.
const bad = SupportState.safeParse({ ...state, slots: { ...state.slots, customer: { ...state.slots.customer, value: { id: 'cus_204', tier: 'diamond' } } } });
console.log(`mistyped state refused: ${!bad.success}`);

const verified = verifyTracePath(join(stateDir, 'traces'), loadKeyRing(stateDir));
console.log(`signed traces: ${verified.summary.verified}/${verified.summary.total} verified`);
