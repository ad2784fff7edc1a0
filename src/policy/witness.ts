import { goLower, goTrim, oneOfHint, uniqueSortedLower } from '../canon/index.js';
import { goQuote } from './go-quote.js';
import { invalidPolicy } from './invalid.js';
import type { RawContext, RawResults } from './schema.js';
import type { ContextConfig, PiiPattern, ResultAction, ResultDetectorConfig, ResultsConfig } from './types.js';

/**
 * The witness sections (`results:`, `context:`), Ward extensions for the MCP proxy (docs/witness.md).
 * Like the constraint blocks, each detector turns on from its own keys and is validated only when
 * on; unlike them, a detector with settings but no `action` is refused rather than defaulted, so a
 * firewall is never quietly weaker than its author thought.
 */

export const RESULT_ACTIONS: ReadonlySet<string> = new Set<ResultAction>(['pass', 'redact', 'block']);

/** Default `results.oversize.max_bytes` when the detector is on without one: 1 MiB of result JSON. */
export const DEFAULT_OVERSIZE_MAX_BYTES = 1_048_576;
const PII_NAME = /^[a-z0-9_]{1,64}$/;
/** Long patterns are almost always pasted by mistake; they also cost the most to run on every result. */
export const MAX_PII_REGEX_CHARS = 1_000;
export const MAX_PII_PATTERNS = 64;
/**
 * A group holding an unbounded quantifier (`+`, `*`, `{n,}`), itself under an unbounded quantifier.
 * A heuristic on the source text (escapes and character classes skipped, two levels of groups):
 * it refuses the classic exponential shapes (`(a+)+`, `((a)+)+`, `(\w+\s?)*`) and lets bounded
 * ones (`(\d{3}-){2}`) through; it also refuses some safe ones (`(?:[a-z]+\.)+`), which a bound
 * fixes.
 */
const ATOM = String.raw`(?:\[(?:[^\]\\]|\\.)*\]|\\.|[^()\\[])`;
const UNBOUNDED = String.raw`(?:[+*]|\{\d+,\})`;
/** An atom, or a group of atoms (so a quantified group inside the group counts too). */
const PART = String.raw`(?:\(${ATOM}*\)|${ATOM})`;
const NESTED_UNBOUNDED = new RegExp(String.raw`\(${PART}*?${UNBOUNDED}${PART}*\)${UNBOUNDED}`);

export function normalizeResults(raw: RawResults): ResultsConfig {
  const credentials = detector(raw.credentials.action, 'credentials', false);
  const invisible = detector(raw.invisible.action, 'invisible', false);
  const pii = { ...detector(raw.pii.action, 'pii', raw.pii.patterns.length > 0), patterns: piiPatterns(raw.pii.patterns) };
  if (pii.enabled && pii.patterns.length === 0) throw invalidPolicy('results.pii.patterns is required when results.pii is configured');
  if (!pii.enabled) pii.patterns = [];
  const oversizeOn = detector(raw.oversize.action, 'oversize', raw.oversize.max_bytes !== 0);
  if (raw.oversize.max_bytes < 0) throw invalidPolicy('results.oversize.max_bytes must be > 0');
  const oversize = {
    ...oversizeOn,
    max_bytes: oversizeOn.enabled ? raw.oversize.max_bytes || DEFAULT_OVERSIZE_MAX_BYTES : 0,
  };
  return {
    enabled: credentials.enabled || invisible.enabled || pii.enabled || oversize.enabled,
    credentials,
    invisible,
    pii,
    oversize,
  };
}

export function normalizeContext(raw: RawContext): ContextConfig {
  const tools = uniqueSortedLower(raw.retrieval_tools).filter((t) => t !== '');
  if (raw.retrieval_tools.length > 0 && tools.length === 0) throw invalidPolicy('context.retrieval_tools lists no tool name');
  return { enabled: tools.length > 0, retrieval_tools: tools };
}

/** `hasSettings`: other keys of the detector are set, so it must say what to do. */
function detector(rawAction: string, name: string, hasSettings: boolean): ResultDetectorConfig {
  const action = goLower(goTrim(rawAction));
  if (action === '') {
    if (hasSettings) throw invalidPolicy(`results.${name}.action is required when results.${name} is configured`, 'one of pass, redact, block');
    return { enabled: false, action: 'pass' };
  }
  if (!RESULT_ACTIONS.has(action)) {
    throw invalidPolicy(`unsupported results.${name}.action ${goQuote(action)}`, oneOfHint(action, RESULT_ACTIONS));
  }
  return { enabled: true, action: action as ResultAction };
}

function piiPatterns(raw: RawResults['pii']['patterns']): PiiPattern[] {
  if (raw.length > MAX_PII_PATTERNS) throw invalidPolicy(`results.pii.patterns has ${raw.length} entries; the limit is ${MAX_PII_PATTERNS}`);
  const seen = new Set<string>();
  const out: PiiPattern[] = [];
  raw.forEach((p, i) => {
    const name = goTrim(p.name);
    const where = `results.pii.patterns[${i}]`;
    if (!PII_NAME.test(name)) throw invalidPolicy(`${where}.name ${goQuote(name)} must match [a-z0-9_]{1,64}`);
    if (seen.has(name)) throw invalidPolicy(`${where}.name ${goQuote(name)} is used twice`);
    seen.add(name);
    if (p.regex === '') throw invalidPolicy(`${where}.regex is required`);
    if (p.regex.length > MAX_PII_REGEX_CHARS) throw invalidPolicy(`${where}.regex is longer than ${MAX_PII_REGEX_CHARS} characters`);
    let re: RegExp;
    try {
      re = new RegExp(p.regex, 'u');
    } catch (err) {
      // The engine's message names the problem (unterminated group, bad escape...) without the input.
      const reason = err instanceof Error ? err.message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '') : String(err);
      throw invalidPolicy(`${where}.regex does not compile: ${reason}`);
    }
    // A pattern that matches nothing at all would redact or block every result.
    if (re.test('')) throw invalidPolicy(`${where}.regex matches the empty string`);
    // Results are hostile input: `(a+)+`, `(\w+\s?)*` can backtrack for minutes on a crafted one.
    if (NESTED_UNBOUNDED.test(p.regex)) {
      throw invalidPolicy(`${where}.regex repeats a group that itself repeats without bound (catastrophic backtracking on hostile results)`, 'bound the inner or the outer repetition, e.g. (?:[a-z]{1,63}\\.){1,8} instead of (?:[a-z]+\\.)+');
    }
    out.push({ name, regex: p.regex });
  });
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
