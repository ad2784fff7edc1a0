import { randomBytes } from 'node:crypto';
import { closeSync, linkSync, mkdirSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { JsonObject } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { fsPromises, linkNewUnsyncedSync, syncDirAsync, writeTempAsync } from '../state/atomic-file.js';
import { captureFileName, captureFileText, traceFileText, type SignedTrace } from '../trace/index.js';
import { decideGate, type GateRequest, type GateResultOutput, type GateRuntime } from './gate-run.js';
import { InFlight } from './in-flight.js';

/**
 * Where long-running hosts (the MCP proxy, the daemon) put signed traces. `write` resolves only
 * once the trace (and its capture) is durable, with where it went; a host must not answer a
 * client before that (Ward decision 6). Implementations batch the expensive part (fsync) across
 * concurrent decisions.
 */
export interface TraceSink {
  write(trace: SignedTrace, capture?: JsonObject): Promise<string>;
  /** Where `write` puts this trace, when a sink knows before it is durable (telemetry names it at decision time). */
  locate?(trace: SignedTrace): string | undefined;
  /** Wait for writes in flight, then release resources. */
  close(): Promise<void>;
}

/** One decision through a sink: decide synchronously, persist durably, then shape the output. */
export async function runGateAsync(sink: TraceSink, rt: GateRuntime, req: GateRequest): Promise<GateResultOutput> {
  const pending = decideGate(rt, req);
  const location = await sink.write(pending.trace, pending.capture);
  return pending.finish(location);
}

/**
 * When a sink's `write` resolves, as the MCP proxy's `--trace-sync` (and the SDK's `durability`):
 * - `fsync`: the trace is on disk (data and name synced): it survives a power loss.
 * - `write`: the trace reached the operating system (written, not synced): it survives a crash or
 *   kill -9 of the process, not a power loss or kernel crash before the OS writes it back.
 */
export type TraceSync = 'fsync' | 'write';

export interface FileTraceSinkOptions {
  /** Default `fsync`. */
  sync?: TraceSync;
}

/**
 * Traces as files in one directory, named as `gate eval` names them (`trace_<trace_id>.json`, then
 * `trace_<trace_id>_<event_id>.json`; never overwritten). Each file is written under a temporary
 * name and published with link(2), so a reader (or a crash) never leaves a partial trace under a
 * trace name.
 * - `fsync` (default): written and fsynced off the main thread; the directory fsync that makes the
 *   names durable is shared by every write that published while the previous one ran (group commit).
 * - `write`: written and published synchronously on the calling thread, with no fsync (a few
 *   system calls, no thread hop); `write` resolves once the file is in the OS's hands.
 */
export class FileTraceSink implements TraceSink {
  private readonly inFlight = new InFlight();
  private dirSync: Promise<void> | undefined;
  private dirSyncQueued: Promise<void> | undefined;
  readonly sync: TraceSync;

  constructor(
    private readonly dir: string,
    options: FileTraceSinkOptions = {},
  ) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.sync = options.sync ?? 'fsync';
  }

  /**
   * `names` replaces the default file names (the first free one is taken, then the last with a
   * random suffix), for hosts with their own naming such as the MCP decision service.
   */
  write(trace: SignedTrace, capture?: JsonObject, names?: readonly string[]): Promise<string> {
    if (this.sync === 'write') {
      try {
        return Promise.resolve(this.writeNow(trace, capture, names));
      } catch (err) {
        return Promise.reject(err as Error);
      }
    }
    return this.inFlight.track(this.persist(trace, capture, names));
  }

  async close(): Promise<void> {
    await this.inFlight.settled();
  }

  /** `write` mode: publish the trace (and capture) now, on this thread, without fsync. */
  private writeNow(trace: SignedTrace, capture: JsonObject | undefined, names: readonly string[] | undefined): string {
    const traceId = String(trace['trace_id'] ?? '');
    const eventId = String(trace['event_id'] ?? '');
    if (!/^[0-9a-f]{24}$/.test(traceId) || !/^[0-9a-f]{24}$/.test(eventId)) {
      throw new WardError(ERROR_CODES.INTERNAL, 'trace sink: record has no valid trace_id/event_id');
    }
    const path = publishNow(this.dir, names?.length ? names : [`trace_${traceId}.json`, `trace_${traceId}_${eventId}.json`], traceFileText(trace));
    if (capture) publishNow(this.dir, [captureFileName(capture)], captureFileText(capture));
    return path;
  }

  private async persist(trace: SignedTrace, capture: JsonObject | undefined, names: readonly string[] | undefined): Promise<string> {
    const traceId = String(trace['trace_id'] ?? '');
    const eventId = String(trace['event_id'] ?? '');
    if (!/^[0-9a-f]{24}$/.test(traceId) || !/^[0-9a-f]{24}$/.test(eventId)) {
      throw new WardError(ERROR_CODES.INTERNAL, 'trace sink: record has no valid trace_id/event_id');
    }
    const [path] = await Promise.all([
      this.publish(names?.length ? names : [`trace_${traceId}.json`, `trace_${traceId}_${eventId}.json`], traceFileText(trace)),
      capture ? this.publish([captureFileName(capture)], captureFileText(capture)) : undefined,
    ]);
    await this.syncDirectory();
    return path;
  }

  /** Write under a temporary name, fsync, then link to the first free name. */
  private async publish(names: readonly string[], text: string): Promise<string> {
    const { link, unlink } = await fsPromises();
    let temp: string | undefined;
    try {
      temp = await writeTempAsync(join(this.dir, names[0]!), text);
      for (const name of withFallback(names)) {
        try {
          await link(temp, join(this.dir, name));
          return join(this.dir, name);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        }
      }
      throw new Error('no free file name');
    } catch (err) {
      throw new WardError(ERROR_CODES.IO, `write trace in ${this.dir}: ${(err as Error).message}`, { cause: err });
    } finally {
      if (temp) await unlink(temp).catch(() => undefined);
    }
  }

  /**
   * A directory fsync that starts after this call: if one is running, every caller arriving
   * meanwhile shares the next one, so N concurrent publishes cost at most two fsyncs.
   */
  private syncDirectory(): Promise<void> {
    if (!this.dirSync) {
      this.dirSync = syncDirAsync(this.dir).finally(() => (this.dirSync = undefined));
      return this.dirSync;
    }
    this.dirSyncQueued ??= this.dirSync.then(() => {
      this.dirSyncQueued = undefined;
      return this.syncDirectory();
    });
    return this.dirSyncQueued;
  }
}

/**
 * Publish `text` in `dir` under the first free name of `names` (then the last with a random
 * suffix) now, on the calling thread and without fsync: written under a temporary name, then
 * link(2)ed, so the name never shows a partial file. Returns the path; `WardError` `ERR_IO` on failure.
 */
export function publishNow(dir: string, names: readonly string[], text: string): string {
  const temp = join(dir, `.${names[0]!}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let created = false;
  try {
    const fd = openSync(temp, 'wx', 0o600);
    created = true;
    try {
      const bytes = Buffer.from(text, 'utf8');
      let written = 0;
      while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
    } finally {
      closeSync(fd);
    }
    for (const name of withFallback(names)) {
      try {
        linkSync(temp, join(dir, name));
        return join(dir, name);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    throw new Error('no free file name');
  } catch (err) {
    throw new WardError(ERROR_CODES.IO, `write trace in ${dir}: ${(err as Error).message}`, { cause: err });
  } finally {
    if (created) {
      try {
        unlinkSync(temp);
      } catch {
        // Already gone.
      }
    }
  }
}

/**
 * Create `path` with `text` now, on the calling thread, without fsync (a file already there counts
 * as written). For a file whose content is already durable elsewhere — a journaled trace — so no
 * sync is needed; it is still published by link from a temporary name, never written in place.
 * `ERR_IO` on failure.
 */
export function writeJournaledNow(path: string, text: string): void {
  // Under a temporary name, then linked: a full disk leaves no partial trace file behind.
  linkNewUnsyncedSync(path, text);
}

/** The given names, then the last one with random suffixes, endlessly (mirrors createUniqueFile). */
function* withFallback(names: readonly string[]): Generator<string> {
  yield* names;
  const last = names[names.length - 1]!;
  const dot = last.lastIndexOf('.');
  for (;;) yield `${last.slice(0, dot)}_${randomBytes(4).toString('hex')}${last.slice(dot)}`;
}
