// Builds the fast CLI entries after `tsc` (part of `npm run build`):
//
//   dist/cli/fast-gate.cjs     `ward gate …`      (src/cli/fast-gate.ts)
//   dist/cli/fast-hook.cjs     `ward hook …`      (src/cli/fast-hook.ts)
//   dist/cli/fast-version.cjs  `ward --version`   (src/cli/fast-version.ts)
//
// Each is the compiled dist/ code of one command bundled by esbuild into one CommonJS file with
// yaml, commander and fflate, so that a decision reads and links one file instead of ~110 modules
// and 80 CommonJS files, plus a V8 code cache (`<bundle>.cache`) made by running the bundle once
// on a sample decision, so that the next process neither parses nor compiles what that run used.
// bin/ward.js picks the bundle for the command; every other command, and every command when a
// bundle is missing or older than tsc's last emit (dist/.tsbuildinfo; without it, than one of its
// dist/ files, which `<bundle>.inputs` lists), runs the unbundled dist/cli/main.js.
// Only pure-JS dependencies the commands need are bundled; the others (classic-level's native
// addon, undici, the MCP SDK, ajv, jose, zod) stay `require`d from node_modules where used.
//
// `node scripts/build-cli.js --warm <bundle> <cache> <cwd> <args…>` is the warm-up run (internal).

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const cliDir = path.join(dist, 'cli');
/** Pure-JS packages bundled into the fast entries; every other package stays external. */
const BUNDLED_PACKAGES = new Set(['yaml', 'commander', 'fflate']);
const ENTRIES = ['fast-gate', 'fast-hook', 'fast-version'];

if (process.argv[2] === '--warm') await warm(process.argv.slice(3));
else await build();

async function build() {
  const esbuild = await import('esbuild');
  for (const name of ENTRIES) {
    const outfile = path.join(cliDir, `${name}.cjs`);
    rmSync(`${outfile}.cache`, { force: true });
    const result = await esbuild.build({
      write: false,
      metafile: true,
      entryPoints: [path.join(cliDir, `${name}.js`)],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      // import() of an external package becomes require(): the bundle runs as a vm.Script,
      // which has no ESM loader of its own.
      supported: { 'dynamic-import': false },
      logLevel: 'warning',
      legalComments: 'none',
      plugins: [wardDist(path.dirname(outfile))],
    });
    // Replaced whole (rename), so a ward process started meanwhile reads the old or the new bundle.
    writeAtomic(outfile, asciiOnly(result.outputFiles[0].text));
    // The dist/ files inside, for bin/ward.js to check that none is newer than the bundle (as after
    // a `tsc` run alone, or `tsc --watch`, which rewrites only what changed).
    const inputs = Object.keys(result.metafile.inputs)
      .map((input) => path.resolve(root, input))
      .filter((file) => file.startsWith(dist + path.sep))
      .map((file) => path.relative(cliDir, file).split(path.sep).join('/'));
    writeAtomic(`${outfile}.inputs`, inputs.join('\n') + '\n');
    writeCodeCache(name, outfile);
  }
}

/**
 * - A bare import is bundled only for BUNDLED_PACKAGES; `node:` builtins and other packages stay
 *   external (required at run time, where used).
 * - `./commands/index.js` (every command, imported by program.js only when no command list is
 *   given) stays external: the fast entries always give one.
 * - Ward's own modules are free of import side effects, so a module none of whose exports are
 *   used is left out (with the packages it imports: the hook does not load classic-level).
 * - commander's `child_process` is required when first used (never, in Ward), not at load.
 * - `import.meta.url` is rewritten to the URL of the module's file in dist/, so paths computed
 *   from it (bin/ward.js, package.json, policies/) are the same as unbundled.
 */
function wardDist(outdir) {
  return {
    name: 'ward-dist',
    setup(b) {
      b.onResolve({ filter: /^\.\/commands\/index\.js$/ }, (args) =>
        args.importer === path.join(cliDir, 'program.js') ? { path: args.path, external: true } : undefined,
      );
      b.onResolve({ filter: /^\.\.?\// }, (args) =>
        args.importer.startsWith(dist + path.sep) ? { path: path.resolve(args.resolveDir, args.path), sideEffects: false } : undefined,
      );
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith('node:')) return { path: args.path, external: true };
        const pkg = args.path.split('/').slice(0, args.path.startsWith('@') ? 2 : 1).join('/');
        return BUNDLED_PACKAGES.has(pkg) ? undefined : { path: args.path, external: true };
      });
      b.onLoad({ filter: /[\\/]commander[\\/]lib[\\/]command\.js$/ }, (args) => {
        // commander needs child_process only to run executable subcommands, which Ward has none
        // of; loading it (net, dgram, streams) costs every command a few milliseconds.
        const source = readFileSync(args.path, 'utf8');
        const eager = "const childProcess = require('node:child_process');";
        if (!source.includes(eager)) throw new Error(`build-cli: ${args.path} no longer has: ${eager}`);
        const lazy = "const childProcess = { spawn: (...a) => require('node:child_process').spawn(...a) };";
        return { contents: source.replace(eager, lazy), loader: 'js' };
      });
      b.onLoad({ filter: /\.js$/ }, (args) => {
        if (!args.path.startsWith(dist + path.sep)) return undefined;
        let contents = readFileSync(args.path, 'utf8');
        if (contents.includes('import.meta.url')) {
          const rel = path.relative(outdir, args.path).split(path.sep).join('/');
          contents = contents.replaceAll(
            'import.meta.url',
            `require("node:url").pathToFileURL(require("node:path").join(__dirname, ${JSON.stringify(rel)})).href`,
          );
        }
        return { contents, loader: 'js' };
      });
    },
  };
}

/**
 * The bundle in ASCII. esbuild already escapes strings, template literals, regular expressions and
 * identifiers (its default charset); what it keeps of comments may not be. One non-ASCII character
 * makes Node read the whole file as a two-byte string: twice the memory, and reading, hashing it
 * for the code cache and scanning it cost a hook call about 1 ms more. In a comment, the escape
 * changes nothing.
 */
function asciiOnly(text) {
  return text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function writeAtomic(file, bytes) {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, bytes);
  renameSync(tmp, file);
}

/** Run the bundle once on a sample call (in a temporary directory), then save its code cache. */
function writeCodeCache(name, outfile) {
  const tmp = mkdtempSync(path.join(tmpdir(), 'ward-build-'));
  try {
    const state = path.join(tmp, '.ward');
    const policy = path.join(root, 'policies', 'baseline-highrisk.yaml');
    let args;
    let input;
    if (name === 'fast-gate') {
      const intent = path.join(tmp, 'intent.json');
      writeFileSync(
        intent,
        JSON.stringify({
          schema_id: 'gait.gate.intent_request',
          schema_version: '1.0.0',
          created_at: '2026-01-01T00:00:00Z',
          producer_version: 'build',
          tool_name: 'tool.write',
          args: { path: '/tmp/out.txt', content: 'hello' },
          targets: [{ kind: 'path', value: '/tmp/out.txt', operation: 'write' }],
          arg_provenance: [{ arg_path: '$.path', source: 'user' }],
          context: { identity: 'build', workspace: tmp, risk_class: 'high', session_id: 'build' },
        }),
      );
      args = ['gate', 'eval', '--policy', policy, '--intent', intent, '--state-dir', state, '--json'];
    } else if (name === 'fast-hook') {
      args = ['hook', 'claude-code', '--policy', policy, '--state-dir', state];
      input = JSON.stringify({
        session_id: 'build',
        cwd: tmp,
        hook_event_name: 'PreToolUse',
        tool_name: 'Read',
        tool_input: { file_path: path.join(tmp, 'intent.json') },
      });
    } else args = ['--version'];
    const cache = `${outfile}.cache`;
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--warm', outfile, cache, tmp, ...args], {
      input: input ?? '',
      encoding: 'utf8',
    });
    // The warm-up is also a smoke test of the bundle: it must answer (one line of JSON, or the version).
    const out = r.stdout.trim();
    const answered = name === 'fast-version' ? /^\d+\.\d+\.\d+/.test(out) : out.startsWith('{') && JSON.parse(out) !== null;
    if (r.status !== 0 || !answered || statSync(cache, { throwIfNoEntry: false }) === undefined) {
      rmSync(cache, { force: true });
      throw new Error(`build-cli: the ${name} bundle failed its warm-up run (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** The warm-up process: load the bundle as bin/ward.js does, run it, write the code cache. */
async function warm([bundle, cache, cwd, ...args]) {
  process.chdir(cwd);
  process.argv = [process.argv[0], path.join(root, 'bin', 'ward.js'), ...args];
  const script = new Script(Module.wrap(readFileSync(bundle, 'latin1')), { filename: bundle });
  const module = { exports: {} };
  script.runInThisContext().call(module.exports, module.exports, Module.createRequire(bundle), module, bundle, path.dirname(bundle));
  await module.exports.run();
  // Verdicts exit 0, 3 or 4; the warm-up only needs an answer.
  process.exitCode = 0;
  writeAtomic(cache, script.createCachedData());
}
