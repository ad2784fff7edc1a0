import { readFileSync, statSync } from 'node:fs';
import { EXIT } from '../contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { decodeRawPolicy } from './decode.js';
import { policyDigest } from './digest.js';
import { checkForeignDocument, checkLegacyFields } from './legacy.js';
import { normalizePolicy } from './normalize.js';
import type { LoadedPolicy } from './types.js';
import { parseYamlSource } from './yaml-source.js';
import { policyParseError } from './invalid.js';

/**
 * Policy YAML text to an evaluable policy, in the reference's order (`gate.md` §2.1): YAML syntax
 * and duplicate keys, then legacy top-level keys, then the strict typed decode, then
 * normalization and validation. The digest is computed once, here.
 */
export function parsePolicyYaml(text: string): LoadedPolicy {
  if (text.length > MAX_POLICY_CHARS) {
    throw policyParseError(`the policy is ${(text.length / 1048576).toFixed(1)} MiB; the limit is ${MAX_POLICY_CHARS / 1048576} MiB`, POLICY_SIZE_HINT);
  }
  const source = parseYamlSource(text);
  checkForeignDocument(source);
  checkLegacyFields(source);
  const policy = normalizePolicy(decodeRawPolicy(source));
  return { policy, digest: policyDigest(policy) };
}

/**
 * A policy a user gave Ward — a file, or stdin as `-` — rather than text built in code. Two
 * differences from parsePolicyYaml: input with no YAML content at all (an empty file, an empty
 * pipe, only comments) is refused — the engine reads it as the reference does, a policy whose
 * every call needs approval, but as input it is almost always the wrong file or a failed
 * redirect — and every error names the source.
 */
export function parsePolicySource(text: string, source: string): LoadedPolicy {
  try {
    if (!hasYamlContent(text)) {
      throw policyParseError('the policy is empty', 'pass the policy file itself (`ward init` writes .ward.yaml; shipped policies are in policies/)');
    }
    return parsePolicyYaml(text);
  } catch (err) {
    if (!(err instanceof WardError) || (err.code !== ERROR_CODES.POLICY_PARSE && err.code !== ERROR_CODES.POLICY_INVALID)) throw err;
    // The message stays the reference's (JSON callers compare it); `source` names the input, and
    // the text form leads with it.
    const details = { ...err.details, source: source === '-' ? 'stdin' : source };
    throw new WardError(err.code, err.message, { exitCode: err.exitCode, ...(err.hint ? { hint: err.hint } : {}), details, cause: err });
  }
}

/** Whether the text holds anything but blank lines and comments. */
function hasYamlContent(text: string): boolean {
  return text.split(/\r?\n/).some((line) => {
    const t = line.trim();
    return t !== '' && !t.startsWith('#') && t !== '---' && t !== '...';
  });
}

/**
 * Policies are short YAML files: 4 MiB holds over 20,000 rules. A larger file is almost always the
 * wrong file, and parsing one costs seconds and gigabytes before it fails.
 */
export const MAX_POLICY_CHARS = 4 * 1024 * 1024;
const POLICY_SIZE_HINT = 'check that this is the policy file you meant (`ward init` writes .ward.yaml; shipped policies are in policies/)';

/** The only policy function that touches the disk. A file that cannot be read is invalid input (exit 6). */
export function loadPolicyFile(path: string): LoadedPolicy {
  let text: string;
  try {
    const size = statSync(path).size;
    if (size > MAX_POLICY_CHARS * 4) throw policyParseError(`the policy file is ${(size / 1048576).toFixed(1)} MiB; the limit is ${MAX_POLICY_CHARS / 1048576} MiB`, POLICY_SIZE_HINT);
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (err instanceof WardError) throw err;
    const reason = err instanceof Error ? err.message : String(err);
    throw new WardError(ERROR_CODES.IO, `read policy file ${path}: ${reason}`, {
      exitCode: EXIT.INVALID_INPUT,
      hint: 'check the path; start a policy with `ward init` (writes .ward.yaml) or use one of the shipped policies/baseline-*.yaml',
      cause: err,
    });
  }
  return parsePolicySource(text, path);
}
