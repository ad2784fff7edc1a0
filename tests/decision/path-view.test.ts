import { linkSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pathViewOf } from '../../src/decision/path-view.js';
import { canonicalPaths, canonicalTarget } from '../../src/intent/canonical.js';
import { normalizeIntent } from '../../src/intent/normalize.js';
import { parsePolicyYaml } from '../../src/policy/load.js';
import { decide, intent } from '../gate/helpers.js';

/**
 * Paths resolved on the file system the tool uses (issue 26, finding 2): symbolic links are
 * followed and hard links under denied roots found, and the rules see every name of the file.
 */

const DENY_SECRETS = 'default_verdict: allow\nrules: [{ name: fs, effect: allow, match: { target_kinds: [path] }, endpoint: { path_denylist: ["secrets/**"] } }]';

/** A workspace with `secrets/key.pem`, `pub -> secrets`, `key-link.pem -> secrets/key.pem`, a hard link `copy.pem`, and `dangling -> nowhere`. */
function workspace(): string {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'ward-pv-')));
  mkdirSync(join(ws, 'secrets'));
  mkdirSync(join(ws, 'docs'));
  writeFileSync(join(ws, 'secrets', 'key.pem'), 'SECRET');
  writeFileSync(join(ws, 'docs', 'readme.md'), 'hello');
  symlinkSync('secrets', join(ws, 'pub'));
  symlinkSync('secrets/key.pem', join(ws, 'key-link.pem'));
  symlinkSync('docs/../secrets', join(ws, 'winding'));
  linkSync(join(ws, 'secrets', 'key.pem'), join(ws, 'copy.pem'));
  symlinkSync(join(ws, 'nowhere'), join(ws, 'dangling'));
  return ws;
}

function verdict(ws: string, value: string, policy = DENY_SECRETS, searchBound?: number): string {
  const raw = intent({ tool_name: 'fs.read', args: {}, targets: [{ kind: 'path', value, operation: 'read' }], arg_provenance: [] }, { workspace: ws });
  const view = pathViewOf([raw], parsePolicyYaml(policy).policy, searchBound === undefined ? {} : { searchBound });
  const o = decide(policy, raw, view ? { pathView: view } : {});
  return `${o.verdict} ${[...o.reasonCodes].sort().join(',')}`;
}

describe('pathViewOf: the file system decides what a path names', () => {
  const ws = workspace();
  const DENIED = 'block endpoint_constraint_violation,endpoint_path_denied,matched_rule_fs';
  const NOT_CANONICAL = 'block endpoint_constraint_violation,endpoint_target_not_canonical,matched_rule_fs';

  it.each([
    ['secrets/key.pem', DENIED],
    ['pub/key.pem', DENIED],
    ['./pub/./key.pem', DENIED],
    ['key-link.pem', DENIED],
    ['winding/key.pem', DENIED],
    ['copy.pem', DENIED], // a hard link outside the denied tree is the denied file
    ['pub/new-file.pem', DENIED], // does not exist yet: the real directory is still secrets/
    ['docs/readme.md', 'allow matched_rule_fs'],
    ['docs/new.md', 'allow matched_rule_fs'],
    ['dangling/x', NOT_CANONICAL], // the kernel would follow the link, even to create its target
  ])('%s: %s', (value, expected) => {
    expect(verdict(ws, value)).toBe(expected);
    expect(verdict(ws, join(ws, value))).toBe(expected);
  });

  it('reads the lexical path alone without a view, as before (the daemon)', () => {
    const raw = intent({ tool_name: 'fs.read', args: {}, targets: [{ kind: 'path', value: 'pub/key.pem', operation: 'read' }], arg_provenance: [] }, { workspace: ws });
    expect(decide(DENY_SECRETS, raw).verdict).toBe('allow');
  });

  it('fails a hard-linked file closed when the search of the denied roots passes its bound', () => {
    expect(verdict(ws, 'copy.pem', DENY_SECRETS, 1)).toBe(NOT_CANONICAL);
    // A file with one link needs no search.
    expect(verdict(ws, 'docs/readme.md', DENY_SECRETS, 1)).toBe('allow matched_rule_fs');
  });

  it('requires every name to pass an allowlist too', () => {
    const allowDocs = 'default_verdict: allow\nrules: [{ name: fs, effect: allow, match: { target_kinds: [path] }, endpoint: { path_allowlist: ["pub/**", "docs/**"] } }]';
    // `pub/key.pem` is allowlisted as spelled, but it is secrets/key.pem.
    expect(verdict(ws, 'pub/key.pem', allowDocs)).toBe('block endpoint_constraint_violation,endpoint_path_not_allowlisted,matched_rule_fs');
    expect(verdict(ws, 'docs/readme.md', allowDocs)).toBe('allow matched_rule_fs');
  });

  it('matches target_values through the real path', () => {
    const rule = `default_verdict: allow\nrules: [{ name: key, priority: 1, effect: block, match: { target_values: ["${ws}/secrets/key.pem"] } }]`;
    expect(verdict(ws, 'pub/key.pem', rule)).toBe('block matched_rule_key');
    expect(verdict(ws, 'copy.pem', rule)).toBe('block matched_rule_key');
  });

  it('denies through a denylist whose directory is itself a link', () => {
    const viaLink = `default_verdict: allow\nrules: [{ name: fs, effect: allow, match: { target_kinds: [path] }, endpoint: { path_denylist: ["${ws}/pub/**"] } }]`;
    expect(verdict(ws, 'secrets/key.pem', viaLink)).toBe(DENIED);
  });
});

function realpathOr(realpath: (p: string) => string, p: string): string | undefined {
  try {
    return realpath(p);
  } catch {
    return undefined;
  }
}

describe('property: what Ward resolves is what the kernel reaches, or the call is refused', () => {
  const ws = workspace();
  mkdirSync(join(ws, 'docs', 'deep'));
  writeFileSync(join(ws, 'docs', 'deep', 'x'), 'x');
  symlinkSync('../..', join(ws, 'docs', 'deep', 'up'));
  symlinkSync(ws, join(ws, 'docs', 'abs'));
  symlinkSync(`/proc/self/root${ws}/docs`, join(ws, 'magic'));
  const policy = parsePolicyYaml(DENY_SECRETS).policy;
  const segment = fc.constantFrom('.', '..', 'docs', 'deep', 'up', 'abs', 'pub', 'winding', 'secrets', 'magic', 'x', 'key.pem', 'readme.md', 'key-link.pem');
  const spelling = fc.record({
    prefix: fc.constantFrom('', `${ws}/`, `/proc/self/root${ws}/`, `/proc/thread-self/root/proc/self/root${ws}/`),
    segments: fc.array(segment, { minLength: 1, maxLength: 7 }),
  });

  it('every existing file a spelling reaches is among the names the rules check', () => {
    fc.assert(
      fc.property(spelling, ({ prefix, segments }) => {
        const value = prefix + segments.join('/');
        const raw = intent({ tool_name: 'fs.read', args: {}, targets: [{ kind: 'path', value, operation: 'read' }], arg_provenance: [] }, { workspace: ws });
        const view = pathViewOf([raw], policy);
        const target = normalizeIntent(raw).targets[0]!;
        const names = view ? canonicalPaths(canonicalTarget(target, ws, view)) : [];
        const absolute = value.startsWith('/') ? value : `${ws}/${value}`;
        // The kernel's walk (realpath(3)) and a tool that cleans `..` as text first (Node's realpathSync).
        for (const reached of [realpathOr(realpathSync.native, absolute), realpathOr(realpathSync, absolute)]) {
          if (reached === undefined) continue; // the kernel refuses it too
          if (names.length === 0) continue; // refused (not canonical): the call fails closed
          expect(names).toContain(reached);
          // And the denied tree is denied whatever the spelling.
          if (reached.startsWith(`${ws}/secrets`)) expect(decide(DENY_SECRETS, raw, { pathView: view! }).verdict).toBe('block');
        }
      }),
      { numRuns: 400 },
    );
  });
});
