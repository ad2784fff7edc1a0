import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * No code path writes a final file in place (issue 29): every call in src/ that opens a file for
 * writing is either in the atomic-file helper (temporary name in the same directory, synced as
 * needed, renamed or linked, removed on failure) or listed here with the reason it is safe. A new
 * write elsewhere fails this test until it goes through src/state/atomic-file.ts or is listed.
 */
const SRC = join(import.meta.dirname, '..', '..', 'src');
const HELPER = 'state/atomic-file.ts';

/** Calls that create or change file content. */
const WRITE_CALL = /\b(writeFileSync|appendFileSync|createWriteStream|appendFile|writeFile|truncate|truncateSync|ftruncateSync)\s*\(|\bopen(Sync)?\([^)]*(['"](w|wx|w\+|a|a\+|r\+|wx\+)['"]|O_RDWR|O_WRONLY|O_CREAT)/;

const ALLOWED: { file: string; text: string; why: string }[] = [
  { file: 'state/journal.ts', text: "init = await open(path, 'wx', 0o600)", why: 'a journal segment is created and preallocated before any record goes in; one that fails is deleted' },
  { file: 'state/journal.ts', text: "constants.O_RDWR | O_DSYNC : 'r+'", why: 'appends into a preallocated segment; torn frames are detected by CRC and never acknowledged' },
  { file: 'state/file-lock.ts', text: "fd = openSync(path, 'wx', 0o600)", why: 'a lock file: its existence is the lock (O_EXCL)' },
  { file: 'store/lock.ts', text: "fd = openSync(path, 'wx', 0o600)", why: 'the store lock file (O_EXCL)' },
  { file: 'decision/trace-sink.ts', text: "const fd = openSync(temp, 'wx', 0o600)", why: 'a temporary file, linked into place and removed in finally' },
  { file: 'zip/write.ts', text: "fd = openSync(temp, 'wx', 0o600)", why: 'a temporary archive, renamed into place and removed on failure' },
  { file: 'daemon/console/inbox.ts', text: "writeFileSync(tmp, text, { mode: 0o600, flag: 'wx' })", why: 'a temporary file, renamed into place' },
  { file: 'decision-service/jsonl.ts', text: "const fd = openSync(path, 'a', 0o600)", why: 'an append-only JSONL log under a lock: one write of a whole line, fsynced; readers skip a torn last line' },
  { file: 'decision-service/session.ts', text: "const fd = openSync(path, 'a', 0o600)", why: 'an append-only session JSONL log, as above' },
  { file: 'mcp/proxy/log.ts', text: "createWriteStream(logFile, { flags: 'a', mode: 0o600 })", why: 'the proxy log file (--log-file): append-only diagnostics, not evidence' },
  { file: 'telemetry/decision-log.ts', text: "createWriteStream(target, { flags: 'a', mode: 0o600 })", why: 'the decision log (--decision-log): append-only lines for a SIEM; the signed trace, not this log, is the evidence' },
];

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

describe('atomic files everywhere', () => {
  const found: { file: string; line: number; text: string }[] = [];
  for (const path of sources(SRC)) {
    const file = relative(SRC, path).split('\\').join('/');
    if (file === HELPER) continue;
    readFileSync(path, 'utf8')
      .split('\n')
      .forEach((text, i) => {
        if (!text.trim().startsWith('//') && !text.trim().startsWith('*') && WRITE_CALL.test(text)) found.push({ file, line: i + 1, text: text.trim() });
      });
  }

  it('no code outside src/state/atomic-file.ts opens a file for writing unless listed with its reason', () => {
    const unlisted = found.filter((f) => !ALLOWED.some((a) => a.file === f.file && f.text.includes(a.text)));
    expect(unlisted.map((f) => `src/${f.file}:${f.line}: ${f.text}`)).toEqual([]);
  });

  it('every allowlist entry still matches a write (no stale exceptions)', () => {
    const stale = ALLOWED.filter((a) => !found.some((f) => f.file === a.file && f.text.includes(a.text)));
    expect(stale).toEqual([]);
  });

  it('the scan recognizes an in-place write', () => {
    expect(WRITE_CALL.test("writeFileSync(target, text, { mode: 0o600 })")).toBe(true);
    expect(WRITE_CALL.test("await fh.writeFile(text)")).toBe(true);
    expect(WRITE_CALL.test("fh = await open(path, 'r+')")).toBe(true);
    expect(WRITE_CALL.test("readFileSync(path, 'utf8')")).toBe(false);
  });
});
