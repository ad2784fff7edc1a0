#!/usr/bin/env node
// Runs every bench/*.bench.js (each exports `default async function (h)`), see bench/README.md.
//
//   node bench/run.js [filter] [--json] [--quick] [--list]
//
//   filter   case-insensitive regular expression; a suite runs when it matches the file name, the
//            suite title or a case name (matching cases + the suite's baseline run)
//   --json   print one JSON document on stdout (progress goes to stderr)
//   --quick  fewer/shorter rounds: a smoke test, numbers are noisier
//   --list   list the bench files and exit

import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createHarness, environment, formatSuite, QUICK } from './lib.js';

const here = path.dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  const args = { json: false, quick: false, list: false, filter: null };
  for (const arg of argv) {
    if (arg === '--json') args.json = true;
    else if (arg === '--quick') args.quick = true;
    else if (arg === '--list') args.list = true;
    else if (arg === '-h' || arg === '--help') args.help = true;
    else if (arg.startsWith('--')) throw new Error(`unknown option ${arg}`);
    else if (args.filter === null) args.filter = new RegExp(arg, 'i');
    else throw new Error(`only one filter is accepted (got ${arg})`);
  }
  return args;
}

async function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`bench: ${err.message}\n`);
    process.exitCode = 2;
    return;
  }
  if (args.help) {
    process.stdout.write('usage: node bench/run.js [filter] [--json] [--quick] [--list]\n');
    return;
  }
  const files = (await readdir(here)).filter((f) => f.endsWith('.bench.js')).sort();
  if (args.list) {
    for (const f of files) process.stdout.write(`${f}\n`);
    return;
  }

  const out = (text) => (args.json ? process.stderr : process.stdout).write(text + '\n');
  const env = environment();
  out(`node ${env.node} (v8 ${env.v8}) ${env.platform}, ${env.cpus} × ${env.cpu}, load ${env.loadavg.join(' ')}`);
  if (args.quick) out('--quick: fewer, shorter rounds; numbers are noisier');

  const started = Date.now();
  const suites = [];
  let failures = 0;
  for (const file of files) {
    const name = file.replace(/\.bench\.js$/, '');
    const harness = createHarness({
      file: name,
      filter: args.filter,
      options: args.quick ? QUICK : {},
      log: (line) => process.stderr.write(`${line}\n`),
      onSuite: (suite) => {
        if (!args.json) out(formatSuite(suite));
      },
    });
    try {
      const mod = await import(pathToFileURL(path.join(here, file)).href);
      if (typeof mod.default !== 'function') throw new Error('no default export function');
      await mod.default(harness);
    } catch (err) {
      failures++;
      process.stderr.write(`bench ${file} failed: ${err instanceof Error ? (err.stack ?? err.message) : err}\n`);
    }
    suites.push(...harness.suites);
  }
  const seconds = (Date.now() - started) / 1000;
  if (args.json) {
    process.stdout.write(JSON.stringify({ environment: env, seconds, suites }, null, 2) + '\n');
  } else {
    out(`\n${suites.length} suite(s) in ${seconds.toFixed(1)} s. Ratios compare medians within this run; see bench/README.md.`);
  }
  if (suites.length === 0 && args.filter) process.stderr.write(`no suite matched ${args.filter}\n`);
  if (failures > 0) process.exitCode = 1;
}

await main();
