// Issue 16: hosts never import the CLI, and modules never import each other in a loop. Read from the
// import statements (static, type-only and dynamic) of every file under src/.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** file (relative to the repository) → the files it imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(join(ROOT, 'src'))) {
    const text = readFileSync(file, 'utf8');
    const deps: string[] = [];
    for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.[^']+)'|import\('(\.[^']+)'\)/g)) {
      const spec = (m[1] ?? m[2])!;
      deps.push(relative(ROOT, resolve(dirname(file), spec.replace(/\.js$/, '.ts'))));
    }
    graph.set(relative(ROOT, file), deps);
  }
  return graph;
}

/** Strongly connected components of more than one file (Tarjan). */
function loops(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

const graph = importGraph();

describe('import structure', () => {
  it('nothing outside src/cli imports src/cli (hosts use src/edge for output and errors)', () => {
    const offenders = [...graph].flatMap(([file, deps]) => (file.startsWith('src/cli/') ? [] : deps.filter((d) => d.startsWith('src/cli/')).map((d) => `${file} → ${d}`)));
    expect(offenders).toEqual([]);
  });

  it('src/edge depends on nothing but canon, errors and the exit-code contract', () => {
    const allowed = /^src\/(edge|canon|contract)\/|^src\/errors\.ts$/;
    const offenders = [...graph].flatMap(([file, deps]) => (file.startsWith('src/edge/') ? deps.filter((d) => !allowed.test(d)).map((d) => `${file} → ${d}`) : []));
    expect(offenders).toEqual([]);
  });

  it('no import loops among the daemon, the MCP service and proxy, the edge kit and the CLI', () => {
    const hosts = /^src\/(daemon|mcp|edge|cli|store|decision)\//;
    expect(loops(graph).filter((loop) => loop.some((f) => hosts.test(f)))).toEqual([]);
  });

  it('no import loops anywhere in src/ beyond the one known (sdk, issue 16 step 6)', () => {
    const known = ['src/sdk/errors.ts src/sdk/ward.ts'];
    expect(loops(graph).map((l) => l.join(' ')).filter((l) => !known.includes(l))).toEqual([]);
  });
});
