#!/usr/bin/env node
// `ward gate …`, `ward hook …` and `ward --version` run a bundle of just that command
// (dist/cli/fast-*.cjs, with its V8 code cache; scripts/build-cli.js builds them in `npm run build`).
// Everything else, and these too when their bundle is missing or older than tsc's last emit into
// dist/ (a `tsc`-only build; without dist/.tsbuildinfo, than one of the dist/ files it was built
// from), runs the unbundled CLI (dist/cli/main.js). Both run the same code.
//
// This file is CommonJS (bin/package.json): an ES module entry costs Node's ESM loader several
// milliseconds before the first line runs.
'use strict';
const { readFileSync, statSync } = require('node:fs');
const Module = require('node:module');
const { dirname, join } = require('node:path');
const { Script } = require('node:vm');

/** The bundle for this command line: the command program.ts would load alone, or none (see buildProgram). */
function fastEntry(args) {
  const first = args.find((a) => !a.startsWith('-'));
  if (first === 'gate') return 'fast-gate';
  if (first === 'hook') return 'fast-hook';
  if (first === undefined && args.some((a) => a === '--version' || a === '-v')) return 'fast-version';
  return undefined;
}

const mtime = (file) => statSync(file, { throwIfNoEntry: false })?.mtimeMs;

/** Run a bundle as CommonJS, with its code cache when there is one. False when it must not be used. */
async function runBundle(name) {
  const dir = join(__dirname, '..', 'dist', 'cli');
  const file = join(dir, `${name}.cjs`);
  const built = mtime(file);
  if (built === undefined) return false;
  // Stale when tsc wrote dist/ after the bundle was built (a `tsc` run alone, `tsc --watch`). Every
  // tsc run that emits rewrites dist/.tsbuildinfo (tsconfig.build.json): one stat, where comparing
  // each dist/ file the bundle was built from (`<bundle>.inputs`, ~185 for the hook) cost every
  // call 3-5 ms. Without it (a dist/ built some other way), each of them is compared. The npm
  // package carries neither record (package.json "files"): its dist/ is built once and never
  // rewritten, so an installed Ward runs its bundles without comparing anything.
  const emitted = mtime(join(dir, '..', '.tsbuildinfo'));
  if (emitted !== undefined) {
    if (emitted > built) return false;
  } else if (mtime(`${file}.inputs`) !== undefined) {
    const inputs = readFileSync(`${file}.inputs`, 'utf8').split('\n').filter(Boolean);
    for (const input of inputs) {
      const compiled = mtime(join(dir, input));
      if (compiled === undefined || compiled > built) return false;
    }
  }
  const cacheTime = mtime(`${file}.cache`);
  const cachedData = cacheTime !== undefined && cacheTime >= built ? readFileSync(`${file}.cache`) : undefined;
  // latin1: the bundle is ASCII (scripts/build-cli.js), so this is the same text without UTF-8 decoding.
  const script = new Script(Module.wrap(readFileSync(file, 'latin1')), { filename: file, cachedData });
  const module = { exports: {} };
  script.runInThisContext().call(module.exports, module.exports, Module.createRequire(file), module, file, dirname(file));
  await module.exports.run();
  return true;
}

async function start() {
  const entry = fastEntry(process.argv.slice(2));
  if (entry && (await runBundle(entry))) return;
  await (await import('../dist/cli/main.js')).main();
}

// As an unhandled error in an ES module entry: printed, exit 1.
start().catch((err) => {
  process.exitCode = 1;
  throw err;
});
