import { goLower, goTrim, oneOfHint, uniqueSorted, uniqueSortedLower } from '../canon/index.js';
import { goQuote } from './go-quote.js';
import { invalidPolicy } from './invalid.js';
import type { RawMatch } from './schema.js';
import type { PolicyMatch, ToolAnnotationsMatch } from './types.js';
import { DISCOVERY_METHODS, ENDPOINT_CLASSES } from './vocabulary.js';

/** `match` normalization (`gate.md` §2.4). `ruleName` only feeds error messages. */
export function normalizeMatch(raw: RawMatch, ruleName: string): PolicyMatch {
  const endpointClasses = uniqueSortedLower([...raw.endpoint_class, ...raw.endpoint_classes]);
  for (const cls of endpointClasses) {
    if (!ENDPOINT_CLASSES.has(cls)) {
      throw invalidPolicy(`unsupported match endpoint_class ${goQuote(cls)} for ${ruleName}`, oneOfHint(cls, ENDPOINT_CLASSES));
    }
  }
  // Spelled like intents spell them (`Dynamic-MCP` → `dynamic_mcp`), so both sides compare equal.
  const discoveryMethods = uniqueSorted(raw.discovery_method.map((m) => goLower(goTrim(m)).replace(/[- ]/g, '_')));
  for (const method of discoveryMethods) {
    if (!DISCOVERY_METHODS.has(method)) {
      throw invalidPolicy(`unsupported match discovery_method ${goQuote(method)} for ${ruleName}`, oneOfHint(method, DISCOVERY_METHODS));
    }
  }
  if (raw.max_delegation_depth !== undefined && raw.max_delegation_depth < 0) {
    throw invalidPolicy(`max_delegation_depth must be >= 0 for ${ruleName}`);
  }
  return {
    tool_names: uniqueSortedLower([raw.tool_name, ...raw.tool_names]),
    risk_classes: uniqueSortedLower(raw.risk_classes),
    identities: uniqueSorted(raw.identities),
    workspace_prefixes: uniqueSorted(raw.workspace_prefixes),
    target_kinds: uniqueSortedLower(raw.target_kinds),
    target_values: uniqueSorted(raw.target_values),
    endpoint_classes: endpointClasses,
    discovery_methods: discoveryMethods,
    tool_annotations: normalizeToolAnnotations(raw.tool_annotations),
    skill_publishers: uniqueSortedLower(raw.skill_publishers),
    skill_sources: uniqueSortedLower(raw.skill_sources),
    data_classes: uniqueSortedLower(raw.data_classes),
    destination_kinds: uniqueSortedLower(raw.destination_kinds),
    destination_values: uniqueSorted(raw.destination_values),
    destination_operations: uniqueSortedLower(raw.destination_operations),
    provenance_sources: uniqueSortedLower(raw.provenance_sources),
    context_tool_names: uniqueSortedLower(raw.context_tool_names),
    context_data_classes: uniqueSortedLower(raw.context_data_classes),
    context_endpoint_classes: uniqueSortedLower(raw.context_endpoint_classes),
    context_autonomy_levels: uniqueSortedLower(raw.context_autonomy_levels),
    require_delegation: raw.require_delegation,
    allowed_delegator_identities: uniqueSorted(raw.allowed_delegator_identities),
    allowed_delegate_identities: uniqueSorted(raw.allowed_delegate_identities),
    delegation_scopes: uniqueSortedLower(raw.delegation_scopes),
    max_delegation_depth: raw.max_delegation_depth,
  };
}

function normalizeToolAnnotations(raw: RawMatch['tool_annotations']): ToolAnnotationsMatch | undefined {
  const hints: ToolAnnotationsMatch = {
    read_only_hint: raw.readOnlyHint,
    destructive_hint: raw.destructiveHint,
    idempotent_hint: raw.idempotentHint,
    open_world_hint: raw.openWorldHint,
  };
  return Object.values(hints).some((v) => v !== undefined) ? hints : undefined;
}
