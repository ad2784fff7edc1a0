import { readFileSync, statSync } from 'node:fs';
import { goLower, goTrim } from '../../canon/index.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import { parseJwks, type VerifyKey } from '../../keys/index.js';

/**
 * The approvers list of `ward serve --approver-keys FILE`: a JWKS of Ed25519 public keys, one per
 * approver. An entry may name its approver (`"ward_approver": "alice"`): a token or denial
 * verified by that key must then carry that approver identity. The daemon holds public halves
 * only; each approver keeps the private key (a file, or the browser's key store).
 *
 * The file is read again whenever its size or mtime changes, so registering an approver is editing
 * one file (no restart). A file that stops parsing keeps the last good list and reports why:
 * a typo must not silently remove every approver, nor add one.
 */
export interface Approver {
  key: VerifyKey;
  /** Lowercased approver identity the key is bound to; undefined: any identity. */
  identity?: string | undefined;
}

export class ApproverKeys {
  private approvers: readonly Approver[] = [];
  private stamp = '';
  private lastError: string | undefined;

  constructor(readonly path: string | undefined) {
    if (path) {
      this.refresh();
      if (this.lastError) throw new WardError(ERROR_CODES.KEY_INVALID, `--approver-keys ${path}: ${this.lastError}`);
    }
  }

  /** The approvers now (re-read when the file changed). */
  list(): readonly Approver[] {
    this.refresh();
    return this.approvers;
  }

  keys(): VerifyKey[] {
    return this.list().map((a) => a.key);
  }

  get error(): string | undefined {
    return this.lastError;
  }

  private refresh(): void {
    if (!this.path) return;
    let stamp: string;
    try {
      const st = statSync(this.path);
      stamp = `${st.size}:${st.mtimeMs}:${st.ino}`;
    } catch (err) {
      this.lastError = `cannot read: ${(err as Error).message}`;
      return;
    }
    if (stamp === this.stamp) return;
    try {
      this.approvers = parseApprovers(readFileSync(this.path, 'utf8'));
      this.stamp = stamp;
      this.lastError = undefined;
    } catch (err) {
      this.lastError = (err as Error).message;
    }
  }
}

export function parseApprovers(text: string): Approver[] {
  const keys = parseJwks(text);
  const entries = ((JSON.parse(text) as { keys: unknown[] }).keys ?? []).filter(
    (e): e is Record<string, unknown> => typeof e === 'object' && e !== null && (e as { kty?: unknown }).kty === 'OKP' && (e as { crv?: unknown }).crv === 'Ed25519',
  );
  return keys.map((key, i) => {
    const name = entries[i]?.['ward_approver'];
    if (name !== undefined && (typeof name !== 'string' || goTrim(name) === '')) throw new WardError(ERROR_CODES.KEY_INVALID, `keys[${i}]: ward_approver must be a non-empty string`);
    return { key, ...(typeof name === 'string' ? { identity: goLower(goTrim(name)) } : {}) };
  });
}
