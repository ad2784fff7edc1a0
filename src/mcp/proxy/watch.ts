import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

/**
 * Call `onChange` (debounced) when `path` changes. The directory is watched, not the file, so
 * editors that replace the file (write a temporary, rename over) are seen too.
 */
export function watchFile(path: string, onChange: () => void, debounceMs = 75): () => void {
  const name = basename(path);
  let timer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dirname(path), { persistent: false }, (_event, file) => {
      if (file !== null && file.toString() !== name) return;
      if (timer) clearTimeout(timer);
      timer = setTimeout(onChange, debounceMs);
      timer.unref();
    });
    watcher.on('error', () => undefined);
  } catch {
    // No watcher available: hot reload is off; the proxy still works.
  }
  return () => {
    if (timer) clearTimeout(timer);
    watcher?.close();
  };
}
