import { describe, expect, it } from 'vitest';
import { goPathMatch } from '../../src/gate/glob.js';

describe('goPathMatch (Go path.Match semantics)', () => {
  const cases: [string, string, boolean][] = [
    ['/tmp/*.txt', '/tmp/a.txt', true],
    ['/tmp/*', '/tmp/a/b', false],
    ['a?c', 'abc', true],
    ['a?c', 'a/c', false],
    ['[a-c]x', 'bx', true],
    ['[^a-c]x', 'dx', true],
    ['[^a-c]x', 'ax', false],
    ['*.example.com', 'api.example.com', true],
    ['x\\*', 'x*', true],
    ['x\\*', 'xy', false],
    ['a.b', 'axb', false],
    ['é*', 'éa', true],
    ['😀?', '😀x', true],
  ];
  for (const [pattern, name, want] of cases) {
    it(`${pattern} ${want ? 'matches' : 'does not match'} ${name}`, () => {
      expect(goPathMatch(pattern, name)).toBe(want);
    });
  }

  it('a malformed pattern matches nothing', () => {
    expect(goPathMatch('[', '[')).toBe(false);
    expect(goPathMatch('[]', 'x')).toBe(false);
    expect(goPathMatch('ab\\', 'ab\\')).toBe(false);
  });
});
