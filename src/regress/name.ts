const VALID_NAME = /^[a-z0-9][a-z0-9._-]*$/;

/**
 * A fixture name from `--name` or the run id (§5.2): lowercase, keep `[a-z0-9._-]`, every other
 * run of characters becomes one `-`, leading and trailing `-._` trimmed, empty becomes `fixture`.
 */
export function sanitizeFixtureName(raw: string): string {
  const name = raw
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[-._]+|[-._]+$/g, '');
  return name === '' ? 'fixture' : name;
}

export function isValidFixtureName(name: string): boolean {
  return VALID_NAME.test(name);
}
