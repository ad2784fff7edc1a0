import { readFileSync } from 'node:fs';

/** Ward's version, stamped into `producer_version` fields. */
export const WARD_VERSION: string = (() => {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0-dev';
  } catch {
    return '0.0.0-dev';
  }
})();
