/**
 * A store-owning child process for lock and crash tests. Commands (argv[2]):
 *   hold <stateDir>           open the store, print READY, wait to be killed
 *   ingest-loop <stateDir>    ingest the spool in small chunks, print ACK <id> after each synced put
 */
import { openLevelStore, listSpool } from '../../src/store/index.js';
import { readFileSync, unlinkSync } from 'node:fs';

const [, , command, stateDir] = process.argv;
const store = await openLevelStore(stateDir!);
if (command === 'hold') {
  process.stdout.write('READY\n');
  setInterval(() => {}, 1000);
} else if (command === 'ingest-loop') {
  process.stdout.write('READY\n');
  // Put one file per batch so acknowledgements are fine-grained, then remove the spool file,
  // exactly as ingest() does per chunk.
  for (const file of listSpool(stateDir!)) {
    const bytes = readFileSync(file.path);
    const result = await store.put([{ kind: file.kind, bytes }]);
    for (const entry of result.stored) process.stdout.write(`ACK ${entry.id}\n`);
    unlinkSync(file.path);
  }
  process.stdout.write('DONE\n');
  await store.close();
}
