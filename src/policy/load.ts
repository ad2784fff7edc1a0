import { readFileSync } from 'node:fs';
import { EXIT } from '../contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { decodeRawPolicy } from './decode.js';
import { policyDigest } from './digest.js';
import { checkLegacyFields } from './legacy.js';
import { normalizePolicy } from './normalize.js';
import type { LoadedPolicy } from './types.js';
import { parseYamlSource } from './yaml-source.js';

/**
 * Policy YAML text to an evaluable policy, in the reference's order (`gate.md` §2.1): YAML syntax
 * and duplicate keys, then legacy top-level keys, then the strict typed decode, then
 * normalization and validation. The digest is computed once, here.
 */
export function parsePolicyYaml(text: string): LoadedPolicy {
  const source = parseYamlSource(text);
  checkLegacyFields(source);
  const policy = normalizePolicy(decodeRawPolicy(source));
  return { policy, digest: policyDigest(policy) };
}

/** The only policy function that touches the disk. A file that cannot be read is invalid input (exit 6). */
export function loadPolicyFile(path: string): LoadedPolicy {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new WardError(ERROR_CODES.IO, `read policy file ${path}: ${reason}`, {
      exitCode: EXIT.INVALID_INPUT,
      hint: 'check the path; start a policy with `ward init` (writes .ward.yaml) or use one of the shipped policies/baseline-*.yaml',
      cause: err,
    });
  }
  return parsePolicyYaml(text);
}
