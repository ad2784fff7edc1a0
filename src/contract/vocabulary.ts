/**
 * The closed value sets of the v1 contract that intents and policies share (`gate.md` §1.2,
 * §2.3–2.4). One definition, imported by the intent normalizer and the policy validator alike.
 */
export const TARGET_KINDS: ReadonlySet<string> = new Set(['path', 'url', 'host', 'repo', 'bucket', 'table', 'queue', 'topic', 'other']);

export const PROVENANCE_SOURCES: ReadonlySet<string> = new Set(['user', 'tool_output', 'external', 'system']);

export const ENDPOINT_CLASSES: ReadonlySet<string> = new Set([
  'fs.read',
  'fs.write',
  'fs.delete',
  'proc.exec',
  'net.http',
  'net.dns',
  'ui.click',
  'ui.type',
  'ui.navigate',
  'other',
]);

export const DISCOVERY_METHODS: ReadonlySet<string> = new Set([
  'webmcp',
  'dynamic_mcp',
  'a2a',
  'mcp',
  'static_mcp',
  'manual',
  'unknown',
]);

export const CREDENTIAL_SOURCES: ReadonlySet<string> = new Set([
  'aws_iam_user',
  'aws_sts',
  'azure_federated',
  'command',
  'env',
  'gcp_sts',
  'github_oidc',
  'github_pat',
  'kubernetes_service_account',
  'stub',
  'unknown',
  'vault_dynamic',
]);

export const CREDENTIAL_ACCESS_TYPES: ReadonlySet<string> = new Set([
  'cloud_admin',
  'inherited',
  'jit',
  'standing',
  'static',
  'unknown',
]);

export const SANDBOX_NETWORK_MODES: ReadonlySet<string> = new Set(['disabled', 'egress_allowlist', 'full']);

export const SANDBOX_ENV_EXPOSURE_MODES: ReadonlySet<string> = new Set(['none', 'allowlist', 'full']);

export const SANDBOX_FILESYSTEM_ISOLATIONS: ReadonlySet<string> = new Set(['none', 'workspace', 'container']);

export const SANDBOX_USER_MODES: ReadonlySet<string> = new Set(['default', 'root', 'unprivileged']);
