#!/usr/bin/env node
// `ward gate …`, `ward hook …` and `ward --version` run a bundle of just that command
// (dist/cli/fast-*.cjs, with its V8 code cache; scripts/build-cli.js builds them in `npm run build`).
// Everything else, and these too when their bundle is missing or older than the `tsc` output in
// dist/ (a `tsc`-only build), runs the unbundled CLI. Both run the same compiled code.
import Module from 'node:module';

// Builtins through require: an ESM import of node:fs builds its ESM facade, which loads fs streams
// and fs/promises this path never uses.
const require = Module.createRequire(import.meta.url);
const { readFileSync, statSync } = require('node:fs');
const { dirname } = require('node:path');
const { fileURLToPath } = require('node:url');
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
  const file = fileURLToPath(new URL(`../dist/cli/${name}.cjs`, import.meta.url));
  const built = mtime(file);
  const compiled = mtime(file.replace(/\.cjs$/, '.js'));
  if (built === undefined || compiled === undefined || built < compiled) return false;
  const cacheTime = mtime(`${file}.cache`);
  const cachedData = cacheTime !== undefined && cacheTime >= built ? readFileSync(`${file}.cache`) : undefined;
  const script = new Script(Module.wrap(readFileSync(file, 'utf8')), { filename: file, cachedData });
  const module = { exports: {} };
  script.runInThisContext().call(module.exports, module.exports, Module.createRequire(file), module, file, dirname(file));
  await module.exports.run();
  return true;
}

const entry = fastEntry(process.argv.slice(2));
if (!(entry && (await runBundle(entry)))) await (await import('../dist/cli/main.js')).main();
