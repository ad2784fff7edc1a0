import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The layering rules of docs/architecture.md, read from the import statements of src/.

const SRC = join(dirname(fileURLToPath(import.meta.url)), '..', 'src');

interface ImportEdge {
  from: string;
  to: string;
  typeOnly: boolean;
  dynamic: boolean;
}

function sourceFiles(): string[] {
  return (readdirSync(SRC, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.split('\\').join('/'))
    .sort();
}

function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

function importsOf(file: string): ImportEdge[] {
  const text = stripComments(readFileSync(join(SRC, file), 'utf8'));
  const edges: ImportEdge[] = [];
  const target = (spec: string) => relative(SRC, normalize(join(SRC, dirname(file), spec))).split('\\').join('/').replace(/\.js$/, '.ts');
  for (const m of text.matchAll(/^\s*(?:import|export)\s+(type\s+)?[^;]*?\bfrom\s+['"](\.[^'"]+)['"]/gm)) {
    edges.push({ from: file, to: target(m[2]!), typeOnly: m[1] !== undefined, dynamic: false });
  }
  for (const m of text.matchAll(/\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g)) {
    edges.push({ from: file, to: target(m[1]!), typeOnly: false, dynamic: true });
  }
  return edges;
}

const files = sourceFiles();
const edges = files.flatMap(importsOf);
const folderOf = (file: string) => (file.includes('/') ? file.slice(0, file.indexOf('/')) : file.replace(/\.ts$/, ''));
// The folder a file is in, down to two levels (mcp/proxy, daemon/console, decision-service).
const subfolderOf = (file: string) => file.split('/').slice(0, -1).slice(0, 2).join('/');

describe('import graph', () => {
  it('reads a plausible graph (every relative import resolves to a file of src/)', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(edges.length).toBeGreaterThan(500);
    const known = new Set(files);
    expect(edges.filter((e) => !known.has(e.to)).map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  it('edges never import the CLI: nothing outside src/cli imports src/cli', () => {
    const offending = edges.filter((e) => folderOf(e.from) !== 'cli' && folderOf(e.to) === 'cli');
    expect(offending.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  it('core modules never import a host, the decision pipeline or the store', () => {
    const core = new Set(['canon', 'intent', 'policy', 'context', 'gate', 'keys', 'trace', 'tokens', 'contract', 'witness']);
    const hosts = new Set(['cli', 'daemon', 'mcp', 'decision-service', 'sdk', 'store', 'decision', 'edge', 'pg', 'cluster', 'telemetry', 'agent-hooks']);
    const offending = edges.filter((e) => core.has(folderOf(e.from)) && hosts.has(folderOf(e.to)));
    expect(offending.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  it('the store imports no host and no decision code', () => {
    const hosts = new Set(['cli', 'daemon', 'mcp', 'decision-service', 'sdk', 'decision', 'edge', 'cluster']);
    const offending = edges.filter((e) => folderOf(e.from) === 'store' && hosts.has(folderOf(e.to)));
    expect(offending.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  it('the edge kit depends on nothing but canon, errors and the exit-code contract', () => {
    const allowed = new Set(['edge', 'canon', 'contract', 'errors']);
    const offending = edges.filter((e) => folderOf(e.from) === 'edge' && !allowed.has(folderOf(e.to)));
    expect(offending.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  it('coding agents\' hook protocols (src/agent-hooks) depend on nothing but canon, errors, intent and policy types', () => {
    // The hook command, the daemon's /v1/hooks/<host>, the decision service's claude_code adapter and
    // the MCP proxy's tool naming all use this folder; it uses none of them.
    const allowed = new Set(['agent-hooks', 'canon', 'errors', 'intent']);
    const offending = edges.filter((e) => folderOf(e.from) === 'agent-hooks' && !allowed.has(folderOf(e.to)) && !(e.typeOnly && e.to === 'policy/types.ts'));
    expect(offending.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  it('hosts reach hook protocols through src/agent-hooks: the daemon and the hook command import no hook code from the decision service', () => {
    const users = edges.filter((e) => ['daemon', 'cli'].includes(folderOf(e.from)) && /agent-hooks\//.test(e.to));
    expect(users.map((e) => e.from)).toEqual(expect.arrayContaining(['daemon/decision-service.ts', 'cli/commands/hook.ts']));
    const viaService = edges.filter((e) => ['daemon/decision-service.ts', 'cli/commands/hook.ts'].includes(e.from) && /^decision-service\/(hook|adapters|tool-call)/.test(e.to));
    expect(viaService.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  it('the daemon never imports src/mcp: it mounts the decision service from src/decision-service', () => {
    const offending = edges.filter((e) => folderOf(e.from) === 'daemon' && folderOf(e.to) === 'mcp');
    expect(offending.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
    // The rule is about a real edge: the daemon does mount the decision service.
    expect(edges.some((e) => e.from === 'daemon/decision-service.ts' && e.to === 'decision-service/http.ts')).toBe(true);
  });

  it('the decision service (src/decision-service) is a host over the engine: it imports no other host, and only the CLI and the daemon import it', () => {
    const allowed = new Set([
      'decision-service', 'canon', 'intent', 'policy', 'context', 'gate', 'keys', 'trace', 'tokens',
      'decision', 'state', 'store', 'pack', 'runpack', 'agent-hooks', 'edge', 'contract', 'errors', 'version',
    ]);
    const offending = edges.filter((e) => folderOf(e.from) === 'decision-service' && !allowed.has(folderOf(e.to)));
    expect(offending.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
    const importers = new Set(edges.filter((e) => folderOf(e.to) === 'decision-service' && folderOf(e.from) !== 'decision-service').map((e) => folderOf(e.from)));
    expect([...importers].sort()).toEqual(['cli', 'daemon']);
  });

  it('the telemetry edge (src/telemetry) depends on nothing of Ward but errors', () => {
    const allowed = new Set(['telemetry', 'errors']);
    const offending = edges.filter((e) => folderOf(e.from) === 'telemetry' && !allowed.has(folderOf(e.to)));
    expect(offending.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  it('the OpenTelemetry SDK is loaded only on demand: no value import of @opentelemetry/* anywhere in src/', () => {
    // Telemetry off costs no module load: the exporting side (recorder.ts), the span identity on the
    // deciding side (span-planner.ts) and the SDK option (telemetry.ts) import the packages with
    // `await import(...)` once export is on; everything else may only import their types.
    const valueImports = files.filter((f) => /^\s*(?:import|export)\s+(?!type\b)[^;]*?\bfrom\s+['"]@opentelemetry\//m.test(stripComments(readFileSync(join(SRC, f), 'utf8'))));
    expect(valueImports).toEqual([]);
    const lazy = files.filter((f) => /\bimport\(\s*['"]@opentelemetry\//.test(readFileSync(join(SRC, f), 'utf8')));
    expect(lazy).toEqual(['telemetry/recorder.ts', 'telemetry/span-planner.ts', 'telemetry/telemetry.ts']);
  });

  it('the PostgreSQL plumbing (src/pg) depends on nothing of Ward but errors and canon', () => {
    const allowed = new Set(['pg', 'canon', 'errors']);
    const offending = edges.filter((e) => folderOf(e.from) === 'pg' && !allowed.has(folderOf(e.to)));
    expect(offending.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  it('the cluster state (src/cluster) imports no host: daemon, CLI, MCP and SDK use it, not the reverse', () => {
    const hosts = new Set(['cli', 'daemon', 'mcp', 'decision-service', 'sdk', 'edge']);
    const offending = edges.filter((e) => folderOf(e.from) === 'cluster' && hosts.has(folderOf(e.to)));
    expect(offending.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  it('one trace assembler: only decision/trace-assembler.ts builds and signs trace records (outside src/trace)', () => {
    const signers = files.filter((f) => folderOf(f) !== 'trace' && f !== 'index.ts' && /\b(buildTraceRecord|signTrace)\b/.test(stripComments(readFileSync(join(SRC, f), 'utf8'))));
    expect(signers).toEqual(['decision/trace-assembler.ts']);
  });

  it('other folders enter canon, context, keys, tokens and trace through their index', () => {
    // intent, policy, store, pack and runpack are imported module by module: their indexes would
    // import each other in a loop (intent <-> trace <-> policy, pack <-> store).
    const indexed = new Set(['canon', 'context', 'keys', 'tokens', 'trace']);
    const offending = edges.filter((e) => indexed.has(folderOf(e.to)) && folderOf(e.from) !== folderOf(e.to) && e.from !== 'index.ts' && !e.to.endsWith('/index.ts'));
    expect(offending.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  it('has no import cycles between files (type-only imports included)', () => {
    const graph = new Map<string, string[]>(files.map((f) => [f, []]));
    for (const e of edges) if (!e.dynamic) graph.get(e.from)!.push(e.to);
    expect(cyclesOf(graph)).toEqual([]);
  });

  it('loads modules of another folder only with a visible static import (no hidden await import)', () => {
    const hidden = edges.filter((e) => e.dynamic && subfolderOf(e.from) !== subfolderOf(e.to) && folderOf(e.from) !== 'cli');
    expect(hidden.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });
});

/** Strongly connected components with more than one file (Tarjan), each sorted. */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
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
      if (component.length > 1) out.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}
