import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = new URL('../../src', import.meta.url).pathname;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('one trace assembler', () => {
  it('only decision/trace-assembler.ts builds and signs trace records (outside src/trace itself)', () => {
    const callers = files(SRC)
      .map((f) => relative(SRC, f))
      .filter((f) => !f.startsWith('trace/') && f !== 'index.ts')
      .filter((f) => /\b(buildTraceRecord|signTrace)\b/.test(readFileSync(join(SRC, f), 'utf8')));
    expect(callers).toEqual(['decision/trace-assembler.ts']);
  });
});
