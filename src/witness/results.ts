import { createHmac, hash } from 'node:crypto';
import { isCredentialKey, looksLikeSecretMaterial } from '../intent/secrets.js';
import type { ResultAction, ResultsConfig } from '../policy/types.js';
import { jsonPathChild, walkStrings, type StringAt } from './walk.js';

/**
 * The result firewall's detectors (docs/witness.md "Result firewall"): pure functions over a tool
 * result as it crossed the wire. `inspectResult` finds; `applyResultAction` rewrites. Findings
 * name a detector, a kind, a JSON path and offsets, and carry a digest of the matched text, never
 * the text itself, so they can go into traces and logs as they are.
 */
export type ResultDetector = 'credentials' | 'invisible' | 'pii' | 'oversize';

export interface ResultFinding {
  detector: ResultDetector;
  /** What matched: `aws_access_key_id`, `pem_private_key`, a PII pattern's name, `oversize`, `bidi_control`... */
  kind: string;
  /** JSON path of the string that holds the match (`$.content[0].text`); `$` for oversize. */
  path: string;
  /** UTF-16 offset and length of the match in that string (0 and the size in bytes for oversize). */
  offset: number;
  length: number;
  /** `sha256:<hex>` (or `hmac-sha256:<hex>` with a digest key) of the matched text's UTF-8 bytes. */
  digest: string;
  /** The policy's action for this detector. */
  action: ResultAction;
}

export interface ResultInspection {
  findings: ResultFinding[];
  /** The strictest action over the findings (`pass` without findings). */
  action: ResultAction;
  /** Bytes of the result's JSON text. */
  bytes: number;
  /**
   * A bound stopped the inspection (too many findings, or strings nested too deep): the action is
   * then at least `block` for any detector set to `redact`, since a redaction could be incomplete.
   */
  truncated: boolean;
}

export interface InspectOptions {
  /**
   * Key for the findings' digests. Without it they are plain sha256, which a reader can confirm a
   * guess against: fine for keys (high entropy), weak for PII (an SSN has 10^9 values). The proxy
   * passes its session key.
   */
  digestKey?: Uint8Array;
}

export const MAX_FINDINGS = 1_000;

/** The reason code a result trace records per detector (violation `result_firewall` when acted on). */
export const RESULT_REASON_CODES: Readonly<Record<ResultDetector, string>> = {
  credentials: 'mcp_result_credentials_detected',
  pii: 'mcp_result_pii_detected',
  oversize: 'mcp_result_oversize',
  invisible: 'mcp_result_invisible_characters',
};

interface Pattern {
  kind: string;
  re: RegExp;
  /** Index of the capture group that is the secret (0: the whole match). */
  group: number;
  /** A further test of the match (the pattern alone is not confident enough). */
  accept?: (m: RegExpMatchArray) => boolean;
}

/**
 * High-confidence credential patterns: each has a fixed prefix or structure that ordinary text
 * does not produce, so false positives stay rare. Generic "long random string" heuristics are
 * deliberately absent.
 */
export const CREDENTIAL_PATTERNS: readonly Pattern[] = [
  { kind: 'aws_access_key_id', re: /\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/g, group: 0 },
  {
    // A 40-character secret counts only next to its name: alone it is any base64 string.
    kind: 'aws_secret_access_key',
    re: /(?:aws_?secret_?(?:access_?)?key|secret_?access_?key|SecretAccessKey)["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/dgi,
    group: 1,
  },
  {
    kind: 'pem_private_key',
    re: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/g,
    group: 0,
  },
  { kind: 'github_token', re: /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b/g, group: 0 },
  { kind: 'github_token', re: /\bgithub_pat_[A-Za-z0-9_]{82}\b/g, group: 0 },
  { kind: 'gitlab_token', re: /\bgl(?:pat|dt|rt|ptt|cbt|oas)-[A-Za-z0-9_-]{20,}\b/g, group: 0 },
  { kind: 'slack_token', re: /\bxox[abeoprs]-[A-Za-z0-9-]{10,}\b/g, group: 0 },
  { kind: 'slack_webhook', re: /https:\/\/hooks\.slack\.com\/services\/T[A-Z0-9]+\/B[A-Z0-9]+\/[A-Za-z0-9]{16,}/g, group: 0 },
  { kind: 'stripe_key', re: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b/g, group: 0 },
  { kind: 'openai_key', re: /\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}/g, group: 0 },
  { kind: 'openai_key', re: /\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b/g, group: 0 },
  { kind: 'anthropic_key', re: /\bsk-ant-(?:api|admin)\d\d-[A-Za-z0-9_-]{80,}/g, group: 0 },
  { kind: 'google_api_key', re: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g, group: 0 },
  // Header and payload both start with `{"` in base64url: `eyJ`.
  { kind: 'jwt', re: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}/g, group: 0 },
  {
    // `API_KEY=…`, `"password": "…"`, `db_token: …` in .env files, configs and logs: the name and
    // the value must pass the same tests the gate applies to intent arguments (`gate.md` §1.5:
    // a credential-like name that is not a reference, `_id`, `_hash`…; a value of 16+ characters
    // with a letter and a digit and no space, or a known key prefix). Last, so a specific kind wins.
    kind: 'credential_assignment',
    re: /(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]{0,64}?(?:token|secret|api[_-]?key|access[_-]?key|password|credential)[A-Za-z0-9_.-]{0,64})["']?[ \t]{0,8}[:=][ \t]{0,8}["']?([^\s"'`,;{}()<>]{16,512})/dgi,
    group: 2,
    accept: (m) => isCredentialKey(m[1] ?? '') && credentialValue(m[2] ?? ''),
  },
];

/**
 * Characters a reader does not see but a model reads: zero-width, bidi embeddings, overrides and
 * isolates, word joiners and invisible operators, the BOM inside text, Unicode tag characters
 * (which can spell ASCII invisibly), and C0/C1 controls other than tab, newline and carriage
 * return. Emoji sequences keep their zero-width joiners and variation selectors, and a ZWNJ
 * between letters (Persian, Indic scripts) is ordinary text.
 */
export const INVISIBLE_RUN =
  /(?:[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u00AD\u061C\u115F\u1160\u17B4\u17B5\u180E\u200B\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\u3164\uFEFF\uFFA0\u{E0000}-\u{E007F}]|(?<![\p{Extended_Pictographic}\u{1F3FB}-\u{1F3FF}\uFE0F])\u200D|\u200D(?!\p{Extended_Pictographic})|(?<![\p{L}\p{M}])\u200C|\u200C(?![\p{L}\p{M}]))+/gu;

const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
const TAG = /[\u{E0000}-\u{E007F}]/u;
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/u;

export function invisibleKind(run: string): string {
  if (TAG.test(run)) return 'tag_characters';
  if (BIDI.test(run)) return 'bidi_control';
  if (CONTROL.test(run)) return 'control_character';
  return 'zero_width';
}

const ACTION_RANK: Readonly<Record<ResultAction, number>> = { pass: 0, redact: 1, block: 2 };

export function strictestAction(actions: Iterable<ResultAction>): ResultAction {
  let out: ResultAction = 'pass';
  for (const a of actions) if (ACTION_RANK[a] > ACTION_RANK[out]) out = a;
  return out;
}

export function inspectResult(result: unknown, config: ResultsConfig, options: InspectOptions = {}): ResultInspection {
  const text = safeStringify(result);
  const findings: ResultFinding[] = [];
  // A value JSON cannot write (cyclic, BigInt) never came off the wire: unmeasurable, so oversize.
  let truncated = text === undefined;
  const bytes = text === undefined ? Number.MAX_SAFE_INTEGER : Buffer.byteLength(text, 'utf8');
  const digest = (value: string): string =>
    options.digestKey ? `hmac-sha256:${createHmac('sha256', options.digestKey).update(value, 'utf8').digest('hex')}` : `sha256:${hash('sha256', value, 'hex')}`;
  const push = (f: Omit<ResultFinding, 'digest' | 'action'>, matched: string, action: ResultAction): boolean => {
    if (findings.length >= MAX_FINDINGS) {
      truncated = true;
      return false;
    }
    findings.push({ ...f, digest: digest(matched), action });
    return true;
  };
  if (!config.enabled) return { findings, action: 'pass', bytes, truncated };

  if (config.oversize.enabled && bytes > config.oversize.max_bytes) {
    push({ detector: 'oversize', kind: 'oversize', path: '$', offset: 0, length: bytes }, text ?? '', config.oversize.action);
  }
  const walked = walkStrings(result);
  if (walked.truncated) truncated = true;
  const pii = config.pii.enabled ? config.pii.patterns.map((p) => ({ kind: p.name, re: new RegExp(p.regex, 'gu'), group: 0 })) : [];
  for (const at of walked.strings) {
    if (config.credentials.enabled) scan(at, CREDENTIAL_PATTERNS, 'credentials', config.credentials.action, push);
    if (pii.length > 0) scan(at, pii, 'pii', config.pii.action, push);
    if (config.invisible.enabled) {
      for (const m of at.value.matchAll(INVISIBLE_RUN)) {
        const run = m[0];
        if (!push({ detector: 'invisible', kind: invisibleKind(run), path: at.path, offset: m.index, length: run.length }, run, config.invisible.action)) break;
      }
    }
  }
  let action = strictestAction(findings.map((f) => f.action));
  // An incomplete redaction could let a secret through: fail closed.
  if (truncated && action === 'redact') action = 'block';
  return { findings, action, bytes, truncated };
}

type Push = (f: Omit<ResultFinding, 'digest' | 'action'>, matched: string, action: ResultAction) => boolean;

function scan(at: StringAt, patterns: readonly Pattern[], detector: ResultDetector, action: ResultAction, push: Push): void {
  const taken: [number, number][] = [];
  for (const p of patterns) {
    p.re.lastIndex = 0;
    for (const m of at.value.matchAll(p.re)) {
      const secret = m[p.group];
      if (secret === undefined || secret === '') continue;
      if (p.accept && !p.accept(m)) continue;
      // Patterns with a secret group carry the `d` flag, so the group's own offset is known.
      const offset = p.group === 0 ? m.index : (m.indices?.[p.group]?.[0] ?? m.index);
      const end = offset + secret.length;
      // Two patterns on the same text (a JWT inside a PEM block...) make one finding, the first's.
      if (taken.some(([s, e]) => offset < e && end > s)) continue;
      taken.push([offset, end]);
      if (!push({ detector, kind: p.kind, path: at.path, offset, length: secret.length }, secret, action)) return;
    }
  }
  // A JSON field named like a credential whose whole value looks like one (`{"api_key": "…"}`).
  if (detector === 'credentials' && taken.length === 0 && at.key !== '' && isCredentialKey(at.key) && credentialValue(at.value)) {
    push({ detector, kind: 'credential_field', path: at.path, offset: 0, length: at.value.length }, at.value, action);
  }
}

/**
 * A value that looks like credential material (`gate.md` §1.5) and is not a URL: `token_url:
 * https://oauth2.example/token` names an endpoint, and a secret inside a URL's query is found by
 * its own `name=value` anyway.
 */
function credentialValue(value: string): boolean {
  return looksLikeSecretMaterial(value) && !value.includes('://');
}

/** The marker that replaces a redacted match. */
export function redactionMarker(f: Pick<ResultFinding, 'detector' | 'kind'>): string {
  return `[REDACTED:${f.detector}:${f.kind}]`;
}

/**
 * The result the client receives.
 * - `pass`: the result itself.
 * - `redact`: a copy where each finding whose detector acts `redact` (or `block`, should the
 *   caller redact anyway) is replaced by its marker, in place, so `content[].text`,
 *   `structuredContent` and every other field keep their shape. An oversize finding replaces the
 *   whole result with a text summary (size and digest, the reference under which the proxy can
 *   keep the bytes out of band); `structuredContent` is dropped then, since no summary fits a
 *   tool's output schema.
 * - `block`: an MCP `isError` result naming the detectors and kinds, never the matched text.
 */
export function applyResultAction(result: unknown, findings: readonly ResultFinding[], action: ResultAction): unknown {
  if (action === 'pass' || findings.length === 0) return result;
  if (action === 'block') return blockedResult(findings);
  const redactable = findings.filter((f) => f.action !== 'pass');
  const oversize = redactable.find((f) => f.detector === 'oversize');
  if (oversize) return oversizeSummary(oversize);
  const byPath = new Map<string, ResultFinding[]>();
  for (const f of redactable) byPath.set(f.path, [...(byPath.get(f.path) ?? []), f]);
  return rewrite(result, '$', byPath);
}

export function blockedResult(findings: readonly ResultFinding[]): { content: { type: 'text'; text: string }[]; isError: true } {
  const what = [...new Set(findings.filter((f) => f.action === 'block').map((f) => `${f.detector} (${f.kind})`))];
  const named = what.length > 0 ? what : [...new Set(findings.map((f) => `${f.detector} (${f.kind})`))];
  return {
    content: [{ type: 'text', text: `Ward blocked this tool result: the result firewall flagged ${named.join(', ')}.` }],
    isError: true,
  };
}

function oversizeSummary(f: ResultFinding): { content: { type: 'text'; text: string }[] } {
  return {
    content: [
      {
        type: 'text',
        text: `[REDACTED:oversize] Ward withheld this tool result: ${f.length} bytes, above the policy's limit. Reference: ${f.digest}`,
      },
    ],
  };
}

function rewrite(node: unknown, path: string, byPath: ReadonlyMap<string, ResultFinding[]>): unknown {
  if (typeof node === 'string') {
    const here = byPath.get(path);
    return here ? redactString(node, here) : node;
  }
  if (node === null || typeof node !== 'object') return node;
  if (Array.isArray(node)) return node.map((item, i) => rewrite(item, `${path}[${i}]`, byPath));
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(node as Record<string, unknown>)) {
    // defineProperty: a `__proto__` key parsed from JSON is data, and must stay a key.
    Object.defineProperty(out, key, { value: rewrite(child, jsonPathChild(path, key), byPath), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function redactString(value: string, findings: readonly ResultFinding[]): string {
  // Left to right over the original string; overlapping findings merge into the first marker.
  const sorted = [...findings].sort((a, b) => a.offset - b.offset);
  let out = '';
  let at = 0;
  for (const f of sorted) {
    const end = f.offset + f.length;
    if (end <= at) continue;
    out += value.slice(at, Math.max(at, f.offset));
    if (f.offset >= at) out += redactionMarker(f);
    at = end;
  }
  return out + value.slice(at);
}

function safeStringify(value: unknown): string | undefined {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return undefined;
  }
}
