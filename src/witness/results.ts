import { createHmac, hash } from 'node:crypto';
import { isCredentialKey, looksLikeSecretMaterial } from '../intent/secrets.js';
import type { ResultAction, ResultsConfig } from '../policy/types.js';
import { blobText } from './decode.js';
import { screenForm } from './normalize.js';
import { jsonPathChild } from './walk.js';

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
  /**
   * How the match was seen when not in the string as it is (then `offset` is 0 and `length` the
   * whole string, which a redaction replaces): `normalized` (after NFKC and removing invisible
   * characters), `decoded` (a base64 blob decoded), `joined` (across adjacent content blocks),
   * `key` (in an object key, whose path ends in `#key`; offsets are the key's).
   */
  view?: ResultView;
}

export type ResultView = 'normalized' | 'decoded' | 'joined' | 'key';

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
const CASE_EXACT_PATTERNS: readonly Pattern[] = [
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

const DIGIT = /[0-9]/;

/**
 * Case folding (issue 27: "matching is done after NFKC, case folding ..."). A key whose prefix is
 * written in another case (`GHP_…`, `SK_LIVE_…`, `-----begin rsa private key-----`, a lower-cased
 * AWS key id) keeps what makes it that key: its body is untouched, or (an AWS key id: upper case and
 * digits only) restored by upper-casing. So every pattern is also matched without regard to case,
 * after the exact patterns (an exact match wins the stretch). Words can take a key's shape once
 * case is ignored (`aizawa_…` is `AIza` and 35 more), so such a match counts only when its secret
 * holds a digit, which random key material almost always does and words rarely do; a PEM header
 * counts as it is (nothing ordinary writes `-----begin … private key-----`). A key whose body was
 * re-cased is not restorable and not that key any more: the witness, which folds case, still
 * catches it if a result showed it (docs/witness.md).
 */
const CASE_FOLDED_PATTERNS: readonly Pattern[] = CASE_EXACT_PATTERNS.filter((p) => !p.re.flags.includes('i')).map((p) => ({
  kind: p.kind,
  re: new RegExp(p.re.source, `${p.re.flags}i`),
  group: p.group,
  accept: (m: RegExpMatchArray) => (p.accept === undefined || p.accept(m)) && (p.kind === 'pem_private_key' || DIGIT.test(m[p.group] ?? '')),
}));

/** What the `credentials` detector runs, in order: the exact patterns, then their case-folded twins. */
export const CREDENTIAL_PATTERNS: readonly Pattern[] = [...CASE_EXACT_PATTERNS, ...CASE_FOLDED_PATTERNS];

/** The literal a case-folded twin needs (the patterns without their own `i` flag), in any case. */
const FOLDED_HINT = /AKIA|ASIA|ABIA|ACCA|PRIVATE KEY|gh[pousr]_|github_pat_|gl(?:pat|dt|rt|ptt|cbt|oas)-|xox[abeoprs]-|hooks\.slack\.com|[sr]k_(?:live|test)_|sk-|AIza|eyJ/i;
/**
 * A literal each of CREDENTIAL_PATTERNS needs (its prefix, or for assignments the credential
 * word of the name): a text without any has no credential, and is not scanned pattern by pattern.
 */
const CREDENTIAL_HINT = new RegExp(`${FOLDED_HINT.source}|token|secret|api[_-]?key|access[_-]?key|password|credential`, 'i');

/**
 * Characters a reader does not see but a model reads: zero-width, bidi embeddings, overrides and
 * isolates, word joiners and invisible operators, the combining grapheme joiner, the BOM inside
 * text, Unicode tag characters (which can spell ASCII invisibly), variation selectors that select
 * nothing (which can spell bytes invisibly: a run of two or more, U+FE0E/FE0F after a character
 * that has no emoji form, U+FE00–FE0D and U+E0100–E01EF after a character that is neither an
 * ideograph nor a math symbol), and C0/C1 controls other than tab, newline and carriage return.
 * Emoji sequences keep their zero-width joiners and variation selectors, an ideographic variation
 * sequence its selector, and a ZWNJ between letters (Persian, Indic scripts) is ordinary text.
 */
export const INVISIBLE_RUN =
  /(?:[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180B-\u180F\u200B\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\u3164\uFEFF\uFFA0\u{1BCA0}-\u{1BCA3}\u{E0000}-\u{E007F}\u{E01F0}-\u{E0FFF}]|[\uFE00-\uFE0F\u{E0100}-\u{E01EF}]{2,}|(?<!\p{Emoji})[\uFE0E\uFE0F]|(?<![\p{Ideographic}\p{Sm}])[\uFE00-\uFE0D\u{E0100}-\u{E01EF}]|(?<![\p{Extended_Pictographic}\u{1F3FB}-\u{1F3FF}\uFE0F])\u200D|\u200D(?!\p{Extended_Pictographic})|(?<![\p{L}\p{M}])\u200C|\u200C(?![\p{L}\p{M}]))+/gu;

const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
const TAG = /[\u{E0000}-\u{E007F}]/u;
const SELECTOR = /[\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/u;
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/u;

export function invisibleKind(run: string): string {
  if (TAG.test(run)) return 'tag_characters';
  if (SELECTOR.test(run)) return 'variation_selectors';
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

/** Decoded bytes of one blob screened at most: a longer blob is screened in its first part, and the inspection is `truncated`. */
export const MAX_BLOB_BYTES = 4 * 1024 * 1024;
/** Bounds of the walk over a result: nesting levels followed and strings (values and keys) visited. */
const MAX_DEPTH = 64;
const MAX_STRINGS = 100_000;
/** Keys whose string value is a base64 blob in MCP content (`image.data`, `audio.data`, `resource.blob`). */
export const BLOB_KEYS: ReadonlySet<string> = new Set(['data', 'blob']);

/**
 * The detectors the policy turns on over every string of a result, as it is and as it reads
 * (docs/witness.md "One screen for every shape"): each string and object key as is, and again
 * in its normalized form (NFKC, invisible characters removed); each base64 blob (`data`, `blob`)
 * decoded, decompressed when gzip or zlib, whatever its claimed MIME type; and the texts of
 * adjacent items of every array (content blocks, messages) joined, so a key split over two
 * blocks is found. Takes any JSON payload: a tool result, an error, a notification's or a
 * request's params.
 */
export function inspectResult(result: unknown, config: ResultsConfig, options: InspectOptions = {}): ResultInspection {
  const text = safeStringify(result);
  const findings: ResultFinding[] = [];
  // A value JSON cannot write (cyclic, BigInt) never came off the wire: unmeasurable, so oversize.
  let truncated = text === undefined;
  const bytes = text === undefined ? Number.MAX_SAFE_INTEGER : Buffer.byteLength(text, 'utf8');
  const digest = (value: string): string =>
    options.digestKey ? `hmac-sha256:${createHmac('sha256', options.digestKey).update(value, 'utf8').digest('hex')}` : `sha256:${hash('sha256', value, 'hex')}`;
  const push: Push = (f, matched, action) => {
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
  if (config.credentials.enabled || config.pii.enabled || config.invisible.enabled) {
    const screen = new Screen(config, push);
    screen.visit(result, '$', '', 0);
    if (screen.truncated) truncated = true;
  }
  let action = strictestAction(findings.map((f) => f.action));
  // An incomplete redaction could let a secret through: fail closed.
  if (truncated && action === 'redact') action = 'block';
  return { findings, action, bytes, truncated };
}

type Push = (f: Omit<ResultFinding, 'digest' | 'action'>, matched: string, action: ResultAction) => boolean;

interface Match {
  kind: string;
  offset: number;
  length: number;
  secret: string;
}

/** The text of one array item, as the joined view reads it. */
interface BlockText {
  path: string;
  text: string;
}

/** One inspection's walk (see `inspectResult`). */
class Screen {
  truncated = false;
  private strings = 0;
  private readonly pii: readonly Pattern[];
  /** Decoded (and normalized) text of each blob, by path: the joined view reads blobs too. */
  private readonly decoded = new Map<string, string>();

  constructor(
    private readonly config: ResultsConfig,
    private readonly push: Push,
  ) {
    this.pii = config.pii.enabled ? config.pii.patterns.map((p) => ({ kind: p.name, re: new RegExp(p.regex, 'gu'), group: 0 })) : [];
  }

  visit(node: unknown, path: string, key: string, depth: number): void {
    if (typeof node === 'string') {
      if (this.count()) this.value(path, key, node);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    if (depth >= MAX_DEPTH) {
      this.truncated = true;
      return;
    }
    if (Array.isArray(node)) {
      node.forEach((item: unknown, i: number) => this.visit(item, `${path}[${i}]`, key, depth + 1));
      if (node.length > 1) this.joined(node, path);
      return;
    }
    const object = node as Record<string, unknown>;
    Object.keys(object).forEach((k, i) => {
      if (!this.count()) return;
      // A key that holds a secret is not written into the paths below it (paths go into traces).
      const secretKey = k.length > 0 && this.key(path, i, k);
      this.visit(object[k], secretKey ? keyedPath(path, i) : jsonPathChild(path, k), k, depth + 1);
    });
  }

  private count(): boolean {
    if (this.strings >= MAX_STRINGS) {
      this.truncated = true;
      return false;
    }
    this.strings++;
    return true;
  }

  /** A string value: as is, normalized, and decoded when it is a blob. */
  private value(path: string, key: string, value: string): void {
    const raw = this.detectRaw(path, key, value, undefined);
    this.normalizedView(path, key, value, raw, undefined);
    if (BLOB_KEYS.has(key)) this.blob(path, value);
  }

  /** An object key: as is and normalized. True when it holds a credential or PII (its path is then not written out). */
  private key(objectPath: string, index: number, key: string): boolean {
    const path = `${keyedPath(objectPath, index)}#key`;
    const raw = this.detectRaw(path, '', key, 'key');
    const secret = this.normalizedView(path, '', key, raw, 'key');
    return raw.size > 0 || secret;
  }

  /** Detectors over a string as it is; returns the matched texts of credentials and PII (for the views to skip). */
  private detectRaw(path: string, key: string, value: string, view: ResultView | undefined): Set<string> {
    const seen = new Set<string>();
    const c = this.config;
    for (const [detector, on, patterns, action] of this.secretDetectors()) {
      if (!on) continue;
      for (const m of detect(value, key, patterns, detector === 'credentials')) {
        seen.add(m.secret);
        if (!this.push({ detector, kind: m.kind, path, offset: m.offset, length: m.length, ...(view ? { view } : {}) }, m.secret, action)) return seen;
      }
    }
    if (c.invisible.enabled) {
      for (const m of value.matchAll(INVISIBLE_RUN)) {
        const run = m[0];
        if (!this.push({ detector: 'invisible', kind: invisibleKind(run), path, offset: m.index, length: run.length, ...(view ? { view } : {}) }, run, c.invisible.action)) break;
      }
    }
    return seen;
  }

  private secretDetectors(): [ResultDetector, boolean, readonly Pattern[], ResultAction][] {
    const c = this.config;
    return [
      ['credentials', c.credentials.enabled, CREDENTIAL_PATTERNS, c.credentials.action],
      ['pii', this.pii.length > 0, this.pii, c.pii.action],
    ];
  }

  /**
   * The detectors over the normalized form of a string, when it differs: a match the string as is
   * did not show is a finding over the whole string (offsets of the normalized form are not the
   * string's). True when there was one.
   */
  private normalizedView(path: string, key: string, value: string, raw: ReadonlySet<string>, view: ResultView | undefined): boolean {
    const normalized = screenForm(value);
    if (normalized === value) return false;
    return this.whole(path, key, value.length, normalized, raw, view ?? 'normalized');
  }

  /** Findings over the whole string at `path` for each credential or PII match in `text` not in `skip`. */
  private whole(path: string, key: string, length: number, text: string, skip: ReadonlySet<string>, view: ResultView): boolean {
    let found = false;
    for (const [detector, on, patterns, action] of this.secretDetectors()) {
      if (!on) continue;
      for (const m of detect(text, key, patterns, detector === 'credentials')) {
        if (skip.has(m.secret)) continue;
        found = true;
        if (!this.push({ detector, kind: m.kind, path, offset: 0, length, view }, m.secret, action)) return found;
      }
    }
    return found;
  }

  /** A base64 blob decoded (and decompressed), read as text whatever its MIME type claims. */
  private blob(path: string, value: string): void {
    const blob = blobText(value, MAX_BLOB_BYTES);
    if (blob === undefined) return;
    if (blob.truncated) this.truncated = true;
    const text = screenForm(blob.text);
    this.decoded.set(path, text);
    this.whole(path, '', value.length, text, EMPTY, 'decoded');
  }

  /**
   * The texts of adjacent items joined: a match that spans two or more items (one inside a single
   * item was found there) is a finding over each item's whole text.
   */
  private joined(items: readonly unknown[], path: string): void {
    const blocks: BlockText[] = [];
    items.forEach((item, i) => {
      const b = this.blockText(item, `${path}[${i}]`);
      if (b !== undefined && b.text.length > 0) blocks.push(b);
    });
    if (blocks.length < 2) return;
    const starts: number[] = [];
    let joinedText = '';
    for (const b of blocks) {
      starts.push(joinedText.length);
      joinedText += b.text;
    }
    for (const [detector, on, patterns, action] of this.secretDetectors()) {
      if (!on) continue;
      for (const m of detect(joinedText, '', patterns, false)) {
        const end = m.offset + m.length;
        const spanned = blocks.filter((b, j) => starts[j]! < end && starts[j]! + b.text.length > m.offset);
        if (spanned.length < 2) continue;
        for (const b of spanned) {
          const length = b.text.length;
          if (!this.push({ detector, kind: m.kind, path: b.path, offset: 0, length, view: 'joined' }, m.secret, action)) return;
        }
      }
    }
  }

  /** What the joined view reads of one item: a string, a content block's text or decoded blob, a message's content text. */
  private blockText(item: unknown, path: string): BlockText | undefined {
    if (typeof item === 'string') return { path, text: screenForm(item) };
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return undefined;
    const o = item as Record<string, unknown>;
    if (typeof o['text'] === 'string') return { path: jsonPathChild(path, 'text'), text: screenForm(o['text']) };
    for (const k of BLOB_KEYS) {
      const d = this.decoded.get(jsonPathChild(path, k));
      if (d !== undefined) return { path: jsonPathChild(path, k), text: d };
    }
    for (const inner of ['resource', 'content']) {
      const v = o[inner];
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) return this.blockText(v, jsonPathChild(path, inner));
    }
    return undefined;
  }
}

/**
 * The credentials in a text as the firewall's `credentials` detector finds them (as is, and
 * normalized), with `key` the JSON field the text is the value of (`{"api_key": "…"}`): what the
 * witness keeps in its protected budget.
 */
export function credentialSecrets(text: string, key = ''): string[] {
  const out = detect(text, key, CREDENTIAL_PATTERNS, true).map((m) => m.secret);
  const normalized = screenForm(text);
  if (normalized !== text) for (const m of detect(normalized, key, CREDENTIAL_PATTERNS, true)) if (!out.includes(m.secret)) out.push(m.secret);
  return out;
}

const EMPTY: ReadonlySet<string> = new Set();

/** The path of the member at `index` of the object at `path`, written without its key (the key holds a secret). */
function keyedPath(path: string, index: number): string {
  return `${path}[#${index}]`;
}

/**
 * The matches of `patterns` in `text` (one per stretch of text: two patterns on the same text,
 * a JWT inside a PEM block, make one match, the first's); for credentials, also a JSON field
 * named like a credential whose whole value looks like one (`{"api_key": "…"}`).
 */
function detect(text: string, key: string, patterns: readonly Pattern[], credentialField: boolean): Match[] {
  const out: Match[] = [];
  // One pass for the literal every credential pattern needs, instead of one pass per pattern; the
  // case-folded twins only when a key prefix is there in some case (a `token` word alone needs none).
  let run = patterns;
  if (patterns === CREDENTIAL_PATTERNS) run = !CREDENTIAL_HINT.test(text) ? [] : FOLDED_HINT.test(text) ? CREDENTIAL_PATTERNS : CASE_EXACT_PATTERNS;
  for (const p of run) {
    p.re.lastIndex = 0;
    for (const m of text.matchAll(p.re)) {
      const secret = m[p.group];
      if (secret === undefined || secret === '') continue;
      if (p.accept && !p.accept(m)) continue;
      // Patterns with a secret group carry the `d` flag, so the group's own offset is known.
      const offset = p.group === 0 ? m.index : (m.indices?.[p.group]?.[0] ?? m.index);
      const end = offset + secret.length;
      if (out.some((o) => offset < o.offset + o.length && end > o.offset)) continue;
      out.push({ kind: p.kind, offset, length: secret.length, secret });
    }
  }
  if (credentialField && out.length === 0 && key !== '' && isCredentialKey(key) && credentialValue(text)) {
    out.push({ kind: 'credential_field', offset: 0, length: text.length, secret: text });
  }
  return out;
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
  // Keys that hold a secret (whatever their detector's action): the paths below them are written without them.
  const secretKeys = new Set(findings.filter((f) => f.detector !== 'invisible' && f.path.endsWith('#key')).map((f) => f.path));
  return rewrite(result, '$', '', byPath, secretKeys);
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

function rewrite(node: unknown, path: string, key: string, byPath: ReadonlyMap<string, ResultFinding[]>, secretKeys: ReadonlySet<string>): unknown {
  if (typeof node === 'string') {
    const here = byPath.get(path);
    if (!here) return node;
    const out = redactString(node, here);
    // A blob stays a base64 blob (clients validate it): the markers, encoded.
    return BLOB_KEYS.has(key) && here.some((f) => f.view !== undefined) ? Buffer.from(out, 'utf8').toString('base64') : out;
  }
  if (node === null || typeof node !== 'object') return node;
  if (Array.isArray(node)) return node.map((item, i) => rewrite(item, `${path}[${i}]`, key, byPath, secretKeys));
  const out: Record<string, unknown> = {};
  Object.keys(node).forEach((k, i) => {
    const keyPath = `${keyedPath(path, i)}#key`;
    const keyFindings = byPath.get(keyPath);
    let name = keyFindings ? redactString(k, keyFindings) : k;
    if (keyFindings) for (let n = 2; Object.prototype.hasOwnProperty.call(out, name); n++) name = `${redactString(k, keyFindings)}#${n}`;
    const childPath = secretKeys.has(keyPath) ? keyedPath(path, i) : jsonPathChild(path, k);
    // defineProperty: a `__proto__` key parsed from JSON is data, and must stay a key.
    Object.defineProperty(out, name, {
      value: rewrite((node as Record<string, unknown>)[k], childPath, k, byPath, secretKeys),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  });
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
