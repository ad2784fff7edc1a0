import { compareUtf8, type JsonObject } from '../canon/index.js';
import type { Delegation } from '../intent/types.js';

/** Inputs of the reference `buildTraceRelationship` (`gate.md` §6.1). */
export interface RelationshipInput {
  traceId: string;
  toolName: string;
  /** `context.identity`: the agent entity. */
  identity: string;
  /** `context.session_id`: the parent ref when set. */
  sessionId: string;
  policyId: string;
  policyVersion: string;
  policyDigest: string;
  /** Sorted rule names (scripts only; empty otherwise). */
  matchedRuleIds: readonly string[];
  delegation: Delegation | undefined;
}

interface Ref {
  kind: string;
  id: string;
}

interface Edge {
  kind: string;
  from: Ref;
  to: Ref;
}

interface AgentLink {
  identity: string;
  role: string;
}

/** The graph envelope every trace carries, so traces can be joined to sessions, agents and policies. */
export function buildTraceRelationship(input: RelationshipInput): JsonObject {
  const entityRefs = sortRefs(
    [
      { kind: 'trace', id: input.traceId },
      { kind: 'tool', id: input.toolName },
      { kind: 'agent', id: input.identity },
      { kind: 'policy', id: input.policyDigest },
    ].filter((ref) => ref.id !== ''),
  );
  const policyRef: JsonObject = {
    policy_id: input.policyId,
    policy_version: input.policyVersion,
    policy_digest: input.policyDigest,
  };
  if (input.matchedRuleIds.length > 0) policyRef['matched_rule_ids'] = [...input.matchedRuleIds];

  const out: JsonObject = {};
  if (input.sessionId !== '') out['parent_ref'] = { kind: 'session', id: input.sessionId };
  out['entity_refs'] = entityRefs.map(refJson);
  out['policy_ref'] = policyRef;
  out['agent_chain'] = agentChain(input).map((link) => ({ identity: link.identity, role: link.role }));
  out['edges'] = edges(input).map((edge) => ({ kind: edge.kind, from: refJson(edge.from), to: refJson(edge.to) }));
  out['related_entity_ids'] = [...new Set(entityRefs.map((ref) => ref.id))].sort(compareUtf8);
  return out;
}

function agentChain(input: RelationshipInput): AgentLink[] {
  const links: AgentLink[] = [];
  if (input.delegation) {
    links.push({ identity: input.delegation.requester_identity, role: 'requester' });
    for (const link of input.delegation.chain) {
      links.push({ identity: link.delegator_identity, role: 'delegator' });
      links.push({ identity: link.delegate_identity, role: 'delegate' });
    }
  } else {
    links.push({ identity: input.identity, role: 'requester' });
  }
  const unique = new Map<string, AgentLink>();
  for (const link of links) {
    if (link.identity !== '') unique.set(`${link.role}\x00${link.identity}`, link);
  }
  return [...unique.values()].sort((a, b) => compareUtf8(a.role, b.role) || compareUtf8(a.identity, b.identity));
}

function edges(input: RelationshipInput): Edge[] {
  const agent = { kind: 'agent', id: input.identity };
  const tool = { kind: 'tool', id: input.toolName };
  const list: Edge[] = [
    { kind: 'calls', from: agent, to: tool },
    { kind: 'governed_by', from: tool, to: { kind: 'policy', id: input.policyDigest } },
  ];
  for (const link of input.delegation?.chain ?? []) {
    list.push({
      kind: 'delegates_to',
      from: { kind: 'agent', id: link.delegator_identity },
      to: { kind: 'agent', id: link.delegate_identity },
    });
  }
  return list.sort(
    (a, b) =>
      compareUtf8(a.kind, b.kind) ||
      compareUtf8(a.from.kind, b.from.kind) ||
      compareUtf8(a.from.id, b.from.id) ||
      compareUtf8(a.to.kind, b.to.kind) ||
      compareUtf8(a.to.id, b.to.id),
  );
}

function sortRefs(refs: Ref[]): Ref[] {
  return refs.sort((a, b) => compareUtf8(a.kind, b.kind) || compareUtf8(a.id, b.id));
}

function refJson(ref: Ref): JsonObject {
  return { kind: ref.kind, id: ref.id };
}
