// `npm pack` / `npm publish` hooks (package.json prepack and postpack).
//
//   prepack:  build dist/ (skipped with WARD_PREBUILT=1, when dist/ is known to be current), then
//             replace package.json by the published manifest, keeping the original beside it
//   postpack: put the original package.json back
//
// The published manifest has no `scripts`, `devDependencies` or `allowScripts`: they are the
// checkout's. Without this the tarball would carry `prepare`, which npm lists as an install script
// a consumer has to approve, though the tarball needs no build (dist/ is in it).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = process.cwd();
const manifest = path.join(root, 'package.json');
const original = path.join(root, '.package.json.prepack');

/** The package.json a consumer receives: the checkout's, less what only the checkout uses. */
export function publishedManifest(pkg) {
  const { scripts: _scripts, devDependencies: _dev, allowScripts: _allow, ...published } = pkg;
  return published;
}

function restore() {
  if (existsSync(original)) renameSync(original, manifest);
}

function prepack() {
  // A pack that failed between the two hooks left the published manifest in place.
  restore();
  if (process.env.WARD_PREBUILT !== '1') {
    const built = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
    if (built.status !== 0) process.exit(built.status ?? 1);
  }
  const text = readFileSync(manifest, 'utf8');
  writeFileSync(original, text);
  const next = `${manifest}.tmp`;
  writeFileSync(next, `${JSON.stringify(publishedManifest(JSON.parse(text)), null, 2)}\n`);
  renameSync(next, manifest);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const step = process.argv[2];
  if (step === 'prepack') prepack();
  else if (step === 'postpack') restore();
  else {
    console.error('usage: node scripts/pack-manifest.js prepack|postpack');
    process.exit(2);
  }
}
