import { sign, verify } from 'node:crypto';
import type { SigningKey, VerifyKey } from '../keys/index.js';
import type { ReloadTrigger } from './policy-holder.js';

export interface KeyReloadResult {
  ok: boolean;
  changed: boolean;
  /** The key id signing new decisions after the reload. */
  key_id: string;
  error?: string;
}

export interface SigningKeyStatus {
  key_id: string;
  loaded_at: string;
  /** Key ids this process has signed with, oldest first (all published in the JWKS). */
  previous_key_ids: string[];
  reloads_ok: number;
  reloads_failed: number;
  last_reload_error?: string;
  last_reload_error_at?: string;
}

/**
 * The daemon's signing key and its reload (SIGHUP). `load` re-reads the configured source (the
 * `--private-key` file, `--private-key-env`, or the default `<state>/keys` key); the new key is
 * checked completely (parsed, owner-only file mode, a test signature that verifies) before it
 * replaces the current one, and a failure keeps the current key and is reported, like a bad policy.
 * Every key this process has signed with stays published (`verifyKeys`), so traces signed before a
 * rotation still verify against the daemon's JWKS. Each decision takes the key once (`current`).
 */
export class SigningKeyHolder {
  private active: SigningKey;
  private loadedAt = new Date();
  /** Public halves of keys signed with before the current one (private halves are dropped). */
  private readonly previous: VerifyKey[] = [];
  private lastError: { message: string; at: Date } | undefined;
  private okCount = 0;
  private failedCount = 0;
  private listeners: ((result: KeyReloadResult, trigger: ReloadTrigger) => void)[] = [];

  /** `load` is undefined for keys that have no source to re-read (an ephemeral `--key-mode dev` key). */
  constructor(
    initial: SigningKey,
    private readonly load: (() => SigningKey) | undefined,
  ) {
    this.active = initial;
  }

  get current(): SigningKey {
    return this.active;
  }

  get reloadable(): boolean {
    return this.load !== undefined;
  }

  /** The current key, then the earlier ones of this process (newest first). */
  get usedKeys(): VerifyKey[] {
    return [this.active, ...[...this.previous].reverse()];
  }

  onReload(listener: (result: KeyReloadResult, trigger: ReloadTrigger) => void): void {
    this.listeners.push(listener);
  }

  /** Re-read and validate the key source and switch to it; on any error keep the current key. */
  reload(trigger: ReloadTrigger): KeyReloadResult {
    if (!this.load) return { ok: true, changed: false, key_id: this.active.keyId };
    let result: KeyReloadResult;
    try {
      const next = this.load();
      checkSigningKey(next);
      const changed = next.keyId !== this.active.keyId;
      if (changed) {
        const { publicKey, publicRaw, keyId } = this.active;
        if (!this.previous.some((k) => k.keyId === keyId)) this.previous.push({ publicKey, publicRaw, keyId });
        const again = this.previous.findIndex((k) => k.keyId === next.keyId);
        if (again >= 0) this.previous.splice(again, 1); // switching back to an earlier key
        this.active = next;
        this.loadedAt = new Date();
      }
      this.lastError = undefined;
      this.okCount++;
      result = { ok: true, changed, key_id: this.active.keyId };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.lastError = { message, at: new Date() };
      this.failedCount++;
      result = { ok: false, changed: false, key_id: this.active.keyId, error: message };
    }
    for (const listener of this.listeners) listener(result, trigger);
    return result;
  }

  status(): SigningKeyStatus {
    const status: SigningKeyStatus = {
      key_id: this.active.keyId,
      loaded_at: this.loadedAt.toISOString(),
      previous_key_ids: this.previous.map((k) => k.keyId),
      reloads_ok: this.okCount,
      reloads_failed: this.failedCount,
    };
    if (this.lastError) {
      status.last_reload_error = this.lastError.message;
      status.last_reload_error_at = this.lastError.at.toISOString();
    }
    return status;
  }
}

/** A key that does not produce verifying Ed25519 signatures is refused before it signs anything. */
function checkSigningKey(key: SigningKey): void {
  const probe = Buffer.from('ward serve key reload check');
  let ok = false;
  try {
    ok = verify(null, probe, key.publicKey, sign(null, probe, key.privateKey));
  } catch {
    ok = false;
  }
  if (!ok || key.privateKey.asymmetricKeyType !== 'ed25519') throw new Error('the new signing key does not produce verifying Ed25519 signatures');
}
