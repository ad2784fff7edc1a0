/**
 * Golden host outputs (issue 16): byte-for-byte pins of what each host prints, returns and signs.
 *
 * WHAT. For every host that turns a call into a signed decision — `ward gate eval` (CLI), the SDK's
 * `Ward.evaluate`, the daemon's HTTP routes, `ward mcp proxy` over stdio, and the MCP decision
 * service (`ward mcp proxy --call`, `ward hook claude-code`) — the tests in tests/golden/ run a fixed
 * set of cases with a fixed policy and the fixed V7 test signing key, and compare the exit code /
 * HTTP status, the JSON result and every trace written with fixtures/golden/<host>/<case>.json.
 * The comparison is on the serialized text, not a deep-equal: key order is pinned too. Raw stdout
 * and trace files are pinned byte for byte through `format` (the exact serialization they use, see
 * `parseJsonText`), so the fixture plus its format reproduces the original bytes.
 *
 * Every trace's signature is verified (sha256 over RFC 8785 JCS, Ed25519, independent of Ward's own
 * code) with the V7 public key *before* masking; the record says `signature_verified: true`.
 *
 * MASKED (and only these; everything else is compared exactly):
 * - `observed_at`: the wall clock when the trace was emitted.
 * - `event_id`: derived from `trace_id` and `observed_at`.
 * - `latency_ms`, `decision_latency_ms`: measured time (the latter, floored to whole ms, is omitted
 *   at 0 ms: a decision-service result without it is compared as if it were there).
 * - `sig`, `signed_digest` (in `signature` objects): they cover the masked fields above. They are
 *   verified first, and `key_id` stays pinned.
 * - per host, only where that host makes them up from randomness or the wall clock (the Masker's
 *   `extraKeys`, each commented in its test): `correlation_id` (random per CLI / one-shot process),
 *   `x-request-id` (random prefix per HTTP server), `evaluated_at` of a kill-switch check on hosts
 *   without an evaluation time, `created_at` of MCP proxy intents (stamped with the wall clock),
 *   and the store entry's `ingested_at`/`time`/`size`/`digest` (they follow from masked fields).
 * - trace files named by emission time (`trace__<YYYYMMDDTHHMMSS.nnn>.json`, MCP decision service).
 * - audit records (`auditFile`): `created_at` (written at) and the minted tokens' times.
 * - the token ledger's file name for a consumed token (a digest of a token minted at test time).
 * - the timestamp inside rate-limit counter keys (`rate_limit_key`: the current hour bucket).
 * - values that come from the test's own environment, by substitution wherever they occur: the
 *   temporary work directory (`<WORK>`), the checkout (`<REPO>`), the OS user an approve command
 *   names (`--approver <USER>`) and ids of tokens minted at test time (`<APPROVAL_TOKEN_ID>`…).
 * A masked string value is also replaced wherever else it appears (e.g. an event id inside a
 * `store:trace/<event_id>` path), with the same placeholder. Values derived from randomness (the
 * MCP proxy's session id, and so its intent digests and trace ids) become numbered placeholders
 * (`<TRACE_ID_1>`), so that equal values stay equal; a value-sorted list holding one
 * (`related_entity_ids`) is compared sorted after masking.
 *
 * RUN:  npm run build && npx vitest run tests/golden   — the CLI, daemon, proxy and service cases run
 * bin/ward.js, i.e. dist/: build first, or they test the previous build. The SDK cases import src/.
 *
 * REGENERATE:  UPDATE_GOLDEN=1 npx vitest run tests/golden   (then review `git diff fixtures/golden`;
 * a renamed or removed case leaves its old file behind: delete it). Inputs live in fixtures/golden/inputs.
 * Only legitimate for a deliberate, reviewed behaviour change (a contract erratum, a new public
 * field), committed together with that change and its diff explained in the commit message. A
 * refactor must never need it: a golden that changes during a refactor is a behaviour change.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, expect } from 'vitest';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));
export const WARD = join(REPO, 'bin', 'ward.js');
export const GOLDEN_DIR = join(REPO, 'fixtures', 'golden');
export const UPDATE = process.env['UPDATE_GOLDEN'] === '1';
export const golden = (p: string) => join(GOLDEN_DIR, p);
export const fixture = (p: string) => join(REPO, 'fixtures', p);

/** The V7 test key pair (gate.md §11): every golden trace is signed with it, so key ids are stable. */
export const V7_PUBLIC_KEY_FILE = fixture('keys/v7_public.key');
export const V7_KEY_ID = '65b60673d6ed884bf01c2c222d82ada0740f29ac3355d6a925c81f17f47a27b8';

/** The environment every Ward process gets: no inherited state dir or daemon. */
export const WARD_ENV: Record<string, string> = { WARD_STATE_DIR: '', WARD_DAEMON_URL: '', TZ: 'UTC' };

/** Work directories made by this test file; `guardInputs` removes them when the file is done. */
const workDirs: string[] = [];

/** A fresh work directory with `.ward/` (Ward keeps its state there) and a 0600 copy of the V7 private key. */
export function workDir(prefix: string): { dir: string; key: string } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), `ward-golden-${prefix}-`)));
  workDirs.push(dir);
  mkdirSync(join(dir, '.ward'));
  const key = join(dir, 'v7_private.key');
  copyFileSync(fixture('keys/v7_TEST_ONLY_private.key'), key);
  chmodSync(key, 0o600);
  return { dir, key };
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function runWard(args: string[], opts: { cwd: string; input?: string; env?: Record<string, string> }): CliRun {
  const r = spawnSync(process.execPath, [WARD, ...args], {
    cwd: opts.cwd,
    input: opts.input ?? '',
    encoding: 'utf8',
    env: { ...process.env, ...WARD_ENV, ...opts.env },
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** `runWard` without blocking the test process, so independent cases can run side by side. */
export function runWardAsync(args: string[], opts: { cwd: string; input?: string; env?: Record<string, string> }): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WARD, ...args], { cwd: opts.cwd, env: { ...process.env, ...WARD_ENV, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

// ---------------------------------------------------------------------------------------------
// Exact serializations

/** The serializations Ward uses; `format` names which one produced a text, so bytes are pinned. */
const FORMATS: Record<string, (v: unknown) => string> = {
  'json+lf': (v) => JSON.stringify(v) + '\n',
  json: (v) => JSON.stringify(v),
  'json-indent2+lf': (v) => JSON.stringify(v, null, 2) + '\n',
  'json-indent2': (v) => JSON.stringify(v, null, 2),
};

/** Parse JSON text and name its exact serialization; a text none of FORMATS reproduces fails the test. */
export function parseJsonText(text: string, what: string): { format: string; value: unknown } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${what}: not JSON: ${JSON.stringify(text.slice(0, 500))}`);
  }
  for (const [format, render] of Object.entries(FORMATS)) if (render(value) === text) return { format, value };
  throw new Error(`${what}: JSON in a serialization the golden helper does not know: ${JSON.stringify(text.slice(0, 200))}`);
}

/** Newline-delimited JSON (stdout of the stdio proxy, JSONL logs): each line parsed, byte-exact. */
export function parseJsonLines(text: string, what: string): unknown[] {
  expect(text.endsWith('\n') || text === '', `${what}: ends with a newline`).toBe(true);
  return text
    .split('\n')
    .slice(0, -1)
    .map((line, i) => {
      const p = parseJsonText(line, `${what} line ${i + 1}`);
      expect(p.format, `${what} line ${i + 1}`).toBe('json');
      return p.value;
    });
}

// ---------------------------------------------------------------------------------------------
// Signatures (independent of Ward's code: node:crypto and the `canonicalize` JCS package)

let v7Key: KeyObject | undefined;
function v7PublicKey(): KeyObject {
  const raw = Buffer.from(readFileSync(V7_PUBLIC_KEY_FILE, 'utf8').trim(), 'base64');
  v7Key ??= createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw]), format: 'der', type: 'spki' });
  return v7Key;
}

/** gate.md §6.2: signed_digest = sha256(JCS(record without signature)), sig = Ed25519 over its 32 bytes. */
export function signatureVerifies(record: Record<string, unknown>): boolean {
  const { signature, ...rest } = record as { signature?: { alg: string; key_id: string; sig: string; signed_digest: string } };
  if (!signature || signature.alg !== 'ed25519' || signature.key_id !== V7_KEY_ID) return false;
  const digest = createHash('sha256').update(canonicalize(rest) ?? '').digest();
  if (digest.toString('hex') !== signature.signed_digest) return false;
  return verify(null, digest, v7PublicKey(), Buffer.from(signature.sig, 'base64'));
}

/** A trace file as pinned: its serialization, mode, and the record; the signature must verify. */
export function traceFile(path: string): Record<string, unknown> {
  const text = readFileSync(path, 'utf8');
  const { format, value } = parseJsonText(text, path);
  const trace = value as Record<string, unknown>;
  const verified = signatureVerifies(trace);
  expect(verified, `trace ${path} verifies with the V7 key`).toBe(true);
  return { path, mode: (statSync(path).mode & 0o777).toString(8), format, signature_verified: verified, trace };
}

/** A trace object received in a reply (no file): the signature must verify. */
export function traceObject(trace: Record<string, unknown>, where: string): Record<string, unknown> {
  const verified = signatureVerifies(trace);
  expect(verified, `trace in ${where} verifies with the V7 key`).toBe(true);
  return { signature_verified: verified, trace };
}

// ---------------------------------------------------------------------------------------------
// Masking

/** Keys masked wherever they occur (see the header): key -> placeholder. */
export const MASKED_KEYS: Readonly<Record<string, string>> = {
  observed_at: '<OBSERVED_AT>',
  event_id: '<EVENT_ID>',
  latency_ms: '<LATENCY_MS>',
  decision_latency_ms: '<LATENCY_MS>',
  sig: '<SIG>',
  signed_digest: '<SIGNED_DIGEST>',
};

/**
 * The MCP decision service reports `decision_latency_ms` in whole milliseconds and omits it at 0,
 * so on a fast machine a result may lack it. A result (it has `executed` and `intent_digest`)
 * without it is compared as if it were there: after `intent_digest`, where the service puts it, or
 * in sorted position when the object's keys are sorted (the CLI sorts its JSON output).
 */
function withFlooredLatency(obj: Record<string, unknown>): Record<string, unknown> {
  if ('decision_latency_ms' in obj || !('executed' in obj) || !('intent_digest' in obj)) return obj;
  const keys = Object.keys(obj);
  const sorted = keys.every((k, i) => i === 0 || keys[i - 1]! < k);
  const entries = Object.entries(obj);
  const at = sorted ? entries.findIndex(([k]) => k > 'decision_latency_ms') : entries.findIndex(([k]) => k === 'intent_digest') + 1;
  entries.splice(at < 0 ? entries.length : at, 0, ['decision_latency_ms', 0]);
  return Object.fromEntries(entries);
}

/**
 * String lists Ward sorts by value. When a random id in one is masked, its position among the
 * others is random too, so such a list, if sorted as Ward wrote it, is sorted again after masking.
 */
const SORTED_ARRAYS = new Set(['related_entity_ids']);

/** Keys whose value keeps its shape but holds a wall-clock bucket: only the timestamp is replaced. */
const BUCKET_KEYS = new Set(['rate_limit_key', 'destructive_budget_key']);
const RFC3339_SECONDS = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/g;

export class Masker {
  /** Literal values -> placeholder, replaced in the serialized text (longest first). */
  readonly substitutions = new Map<string, string>();

  constructor(
    /** Host-specific volatile keys (e.g. `correlation_id` for the CLI's random one). */
    readonly extraKeys: Readonly<Record<string, string>> = {},
  ) {}

  /** Replace this literal (a temp dir, a minted token id) wherever it occurs. */
  substitute(value: string, placeholder: string): this {
    if (value) this.substitutions.set(value, placeholder);
    return this;
  }

  /** Replace every match of `re` (global) in the serialized text: for volatile parts inside longer strings. */
  pattern(re: RegExp, placeholder: string): this {
    this.patterns.push([re, placeholder]);
    return this;
  }

  readonly patterns: [RegExp, string][] = [];

  /**
   * Values of `key` that come from randomness (e.g. digests over a random session id) become
   * `<LABEL_n>`, numbered by first appearance, so equal values stay visibly equal (a reply's
   * trace_id is its trace's). `prefix` also replaces that many leading characters of each value
   * (file names built from a digest prefix).
   */
  number(key: string, label: string, prefix?: number): this {
    this.#numbered.set(key, { label, prefix, seen: new Map() });
    return this;
  }

  readonly #numbered = new Map<string, { label: string; prefix: number | undefined; seen: Map<string, string> }>();

  /** The masked JSON text (2-space indent, newline) of `value`, key order kept. */
  text(value: unknown): string {
    const masked = this.#walk(value);
    const subs = [...this.substitutions.entries()].sort((a, b) => b[0].length - a[0].length);
    const replace = (text: string) => {
      for (const [literal, placeholder] of subs) text = text.split(literal).join(placeholder);
      for (const [re, placeholder] of this.patterns) text = text.replace(re, placeholder);
      return text;
    };
    return JSON.stringify(this.#replaceStrings(masked, replace), null, 2) + '\n';
  }

  /** Apply substitutions to every string (and key); a sorted SORTED_ARRAYS list is sorted again after. */
  #replaceStrings(value: unknown, replace: (s: string) => string, key?: string): unknown {
    if (typeof value === 'string') return replace(value);
    if (Array.isArray(value)) {
      const out = value.map((v) => this.#replaceStrings(v, replace));
      const sortedBefore = value.every((v, i) => i === 0 || typeof v !== 'string' || String(value[i - 1]) <= v);
      if (key !== undefined && SORTED_ARRAYS.has(key) && sortedBefore && out.every((v) => typeof v === 'string')) return [...(out as string[])].sort();
      return out;
    }
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[replace(k)] = this.#replaceStrings(v, replace, k);
    return out;
  }

  #walk(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((v) => this.#walk(v));
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(withFlooredLatency(value as Record<string, unknown>))) {
      const placeholder = this.extraKeys[key] ?? MASKED_KEYS[key];
      const numbered = this.#numbered.get(key);
      if (numbered && typeof v === 'string' && v !== '') {
        let p = numbered.seen.get(v);
        if (!p) {
          p = `<${numbered.label}_${numbered.seen.size + 1}>`;
          numbered.seen.set(v, p);
          this.substitutions.set(v, p);
          if (numbered.prefix) this.substitutions.set(v.slice(0, numbered.prefix), `<${numbered.label}_${numbered.seen.size}_PREFIX>`);
        }
        out[key] = p;
      } else if (placeholder !== undefined && v !== undefined && v !== null && typeof v !== 'object') {
        // The same value elsewhere (a path holding an event id) gets the same placeholder.
        if (typeof v === 'string' && v.length >= 8) this.substitutions.set(v, placeholder);
        out[key] = placeholder;
      } else if (BUCKET_KEYS.has(key) && typeof v === 'string') {
        out[key] = v.replace(RFC3339_SECONDS, '<BUCKET_START>');
      } else {
        out[key] = this.#walk(v);
      }
    }
    return out;
  }
}

/**
 * Compare (or, with UPDATE_GOLDEN=1, write) fixtures/golden/<name>.json with the masked `record`.
 */
export function expectGolden(name: string, record: unknown, masker: Masker): void {
  const actual = masker.text(record);
  const path = golden(`${name}.json`);
  if (UPDATE) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, actual);
    return;
  }
  expect(existsSync(path), `${path} exists (generate it with UPDATE_GOLDEN=1)`).toBe(true);
  expect(actual, `golden ${name}`).toBe(readFileSync(path, 'utf8'));
}

/** Wait until the current wall-clock hour has at least `seconds` left (rate-limit buckets are per hour). */
export async function awayFromHourBoundary(seconds = 5): Promise<void> {
  const left = 3600 - (Math.floor(Date.now() / 1000) % 3600);
  if (left < seconds) await new Promise((r) => setTimeout(r, (left + 1) * 1000));
}

/** Every `trace_path` string anywhere in a reply (top level, `proof_refs`, batch items), in order, once each. */
export function tracePathsIn(value: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        if (k === 'trace_path' && typeof x === 'string' && x !== '' && !out.includes(x)) out.push(x);
        else walk(x);
      }
    }
  };
  walk(value);
  return out;
}

/**
 * An approval or delegation audit record file (`approval_audit_path`, `delegation_audit_path`):
 * pinned like a trace, except that its `created_at` (the wall clock when written) and each entry's
 * token times (`created_at`, `expires_at`: tokens are minted at test time) are masked here.
 */
export function auditFile(path: string): Record<string, unknown> {
  const text = readFileSync(path, 'utf8');
  const { format, value } = parseJsonText(text, path);
  const record = { ...(value as Record<string, unknown>) };
  if ('created_at' in record) record['created_at'] = '<WRITTEN_AT>';
  if (Array.isArray(record['entries'])) {
    record['entries'] = (record['entries'] as Record<string, unknown>[]).map((e) => {
      const out = { ...e };
      if ('created_at' in out) out['created_at'] = '<TOKEN_CREATED_AT>';
      if ('expires_at' in out) out['expires_at'] = '<TOKEN_EXPIRES_AT>';
      return out;
    });
  }
  return { path, mode: (statSync(path).mode & 0o777).toString(8), format, record };
}

/** The audit files a reply names (`approval_audit_path`, `delegation_audit_path`), in order. */
export function auditPathsIn(value: unknown): string[] {
  if (value === null || typeof value !== 'object') return [];
  const v = value as Record<string, unknown>;
  return ['approval_audit_path', 'delegation_audit_path'].map((k) => v[k]).filter((p): p is string => typeof p === 'string' && p !== '');
}

/**
 * A copy of the kill-switch fixture in `dir`: hosts append a journal (kill_switch_journal.jsonl)
 * beside the state file, which must not land in fixtures/.
 */
export function killSwitchIn(dir: string): string {
  const path = join(dir, 'kill-switch-stop.json');
  copyFileSync(golden('inputs/kill-switch-stop.json'), path);
  return path;
}

/** The kill-switch journal lines written beside `killSwitchIn(dir)`, with their wall-clock `created_at` masked. */
export function killSwitchJournal(dir: string): Record<string, unknown>[] | undefined {
  const path = join(dir, 'kill_switch_journal.jsonl');
  if (!existsSync(path)) return undefined;
  return parseJsonLines(readFileSync(path, 'utf8'), path).map((l) => ({ ...(l as Record<string, unknown>), created_at: '<WRITTEN_AT>' }));
}

/** A digest of every file name and content under fixtures/golden/inputs. */
function inputsDigest(): string {
  const h = createHash('sha256');
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = join(d, e.name);
      h.update(p + '\0');
      if (e.isDirectory()) walk(p);
      else h.update(readFileSync(p));
    }
  };
  walk(golden('inputs'));
  return h.digest('hex');
}

/**
 * Call at the top of each golden test file: the hosts must write nothing into fixtures/golden/inputs.
 * Its afterAll runs after every suite's own (servers are stopped by then) and removes the work dirs.
 */
export function guardInputs(): void {
  let before = '';
  beforeAll(() => void (before = inputsDigest()));
  afterAll(() => {
    for (const dir of workDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    expect(inputsDigest(), 'fixtures/golden/inputs unchanged by the hosts').toBe(before);
  });
}
