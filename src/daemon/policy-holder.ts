import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { loadPolicyFile } from '../policy/load.js';
import { checkProfile } from '../policy/profile.js';
import type { LoadedPolicy } from '../policy/types.js';

export type ReloadTrigger = 'start' | 'file' | 'sighup' | 'api' | 'cluster';

export interface ReloadResult {
  ok: boolean;
  changed: boolean;
  digest: string;
  error?: string;
}

/** A policy published to the cluster (`ward policy publish`), as the replica activated it. */
export interface PublishedPolicySource {
  seq: number;
  digest: string;
  key_id: string;
  published_at: string;
  published_by: string;
}

export interface PolicyStatus {
  policy_digest: string;
  source_path: string;
  rule_count: number;
  loaded_at: string;
  reloads_ok: number;
  reloads_failed: number;
  last_reload_error?: string;
  last_reload_error_at?: string;
  last_reload_trigger?: ReloadTrigger;
  /** Only in a cluster: `file` (the --policy file, until a policy is published) or `published`. */
  policy_source?: 'file' | 'published';
  /** The publication being enforced (policy_source `published`). */
  publication?: PublishedPolicySource;
}

/**
 * The active policy and its hot reload. A reload reads and validates the file completely (the same
 * checks as `ward policy validate` and the start-up load) before it replaces anything; a failure
 * keeps the previous policy in service and is reported, never half-applied. Each decision takes
 * the policy once (`current`), so a reload never changes a decision in progress.
 */
export class PolicyHolder {
  private active: LoadedPolicy;
  private loadedAt: Date;
  private lastError: { message: string; at: Date } | undefined;
  private lastTrigger: ReloadTrigger | undefined;
  private okCount = 0;
  private failedCount = 0;
  private watcher: FSWatcher | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private listeners: ((result: ReloadResult, trigger: ReloadTrigger) => void)[] = [];
  /** Set once the cluster control plane is attached; `published` once a publication is active. */
  private cluster: { published: PublishedPolicySource | undefined } | undefined;

  constructor(
    readonly path: string,
    private readonly profile: 'standard' | 'oss-prod',
  ) {
    this.active = this.load();
    this.loadedAt = new Date();
  }

  get current(): LoadedPolicy {
    return this.active;
  }

  get failing(): boolean {
    return this.lastError !== undefined;
  }

  get loadedAtDate(): Date {
    return this.loadedAt;
  }

  onReload(listener: (result: ReloadResult, trigger: ReloadTrigger) => void): void {
    this.listeners.push(listener);
  }

  private load(): LoadedPolicy {
    const loaded = loadPolicyFile(this.path);
    checkProfile(loaded.policy, this.profile);
    return loaded;
  }

  /** The cluster follows published policies from now on (`attachControlPlane`). */
  followCluster(): void {
    this.cluster ??= { published: undefined };
  }

  /** The publication being enforced, if any. */
  get publication(): PublishedPolicySource | undefined {
    return this.cluster?.published;
  }

  /**
   * Validate the file and switch to it; on any error keep the current policy. Once a published
   * policy is in force the cluster decides the policy: a file change or SIGHUP does not replace it.
   */
  reload(trigger: ReloadTrigger): ReloadResult {
    if (this.cluster?.published) {
      this.lastTrigger = trigger;
      const result: ReloadResult = { ok: true, changed: false, digest: this.active.digest };
      for (const listener of this.listeners) listener(result, trigger);
      return result;
    }
    return this.switchTo(trigger, () => this.load());
  }

  /**
   * Switch to a published policy. `load` verifies the publication (signature, digest) and parses
   * its text strictly; the profile check follows. Any failure keeps the policy in service and is
   * reported (`last_reload_error`, trigger `cluster`): a publication that fails is never activated.
   */
  activate(load: () => LoadedPolicy, source: PublishedPolicySource): ReloadResult {
    const result = this.switchTo('cluster', () => {
      const loaded = load();
      checkProfile(loaded.policy, this.profile);
      return loaded;
    });
    if (result.ok) {
      this.cluster ??= { published: undefined };
      this.cluster.published = source;
    }
    return result;
  }

  private switchTo(trigger: ReloadTrigger, load: () => LoadedPolicy): ReloadResult {
    this.lastTrigger = trigger;
    let result: ReloadResult;
    try {
      const next = load();
      const changed = next.digest !== this.active.digest;
      this.active = next;
      this.loadedAt = new Date();
      this.lastError = undefined;
      this.okCount++;
      result = { ok: true, changed, digest: next.digest };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.lastError = { message, at: new Date() };
      this.failedCount++;
      result = { ok: false, changed: false, digest: this.active.digest, error: message };
    }
    for (const listener of this.listeners) listener(result, trigger);
    return result;
  }

  /**
   * Reload when the file changes. The directory is watched (editors and `mv` replace the file, which
   * a watch on the file itself would lose); events are debounced so a write in several chunks is
   * read once, complete.
   */
  watchFile(debounceMs = 100): void {
    if (this.watcher) return;
    const name = basename(this.path);
    this.watcher = watch(dirname(this.path), { persistent: false }, (_event, file) => {
      if (file !== null && file !== name) return;
      if (this.debounce) clearTimeout(this.debounce);
      this.debounce = setTimeout(() => {
        this.debounce = undefined;
        this.reload('file');
      }, debounceMs);
      this.debounce.unref();
    });
    this.watcher.on('error', () => {
      // The directory went away: keep serving the loaded policy; SIGHUP still reloads.
    });
  }

  close(): void {
    if (this.debounce) clearTimeout(this.debounce);
    this.watcher?.close();
    this.watcher = undefined;
  }

  status(): PolicyStatus {
    const status: PolicyStatus = {
      policy_digest: this.active.digest,
      source_path: this.path,
      rule_count: this.active.policy.rules.length,
      loaded_at: this.loadedAt.toISOString(),
      reloads_ok: this.okCount,
      reloads_failed: this.failedCount,
    };
    if (this.lastError) {
      status.last_reload_error = this.lastError.message;
      status.last_reload_error_at = this.lastError.at.toISOString();
    }
    if (this.lastTrigger) status.last_reload_trigger = this.lastTrigger;
    if (this.cluster) {
      status.policy_source = this.cluster.published ? 'published' : 'file';
      if (this.cluster.published) status.publication = { ...this.cluster.published };
    }
    return status;
  }
}
