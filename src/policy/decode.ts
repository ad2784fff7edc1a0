import { Alias, isMap, isScalar, isSeq, type Node, type Pair } from 'yaml';
import { closestMatch } from '../canon/index.js';
import { goQuote } from './go-quote.js';
import { formatPos, policyParseError } from './invalid.js';
import { POLICY_SPEC, zeroValue, type FieldSpec, type ObjectSpec, type RawPolicy } from './schema.js';
import { isMergeKey, keyText, nodePos, type YamlSource } from './yaml-source.js';

/**
 * Nodes that aliases may expand to, beyond the source itself. The policy shape has no recursion,
 * so only a deliberate bomb (many aliases to large anchors) comes near this.
 */
const MAX_ALIAS_EXPANSION = 100_000;

/**
 * Strict typed decode of a policy document (the reference's `Strict` + `DisallowUnknownField`):
 * unknown keys at any depth and values of the wrong type fail with their position. Absent and
 * `null` values decode to Go zero values.
 */
export function decodeRawPolicy(source: YamlSource): RawPolicy {
  const decoder = new Decoder(source);
  const root = source.doc.contents;
  if (root === null) return zeroValue(POLICY_SPEC);
  return decoder.decode(root, POLICY_SPEC, '', false) as RawPolicy;
}

class Decoder {
  private expanded = 0;

  constructor(private readonly source: YamlSource) {}

  decode(node: unknown, spec: FieldSpec, path: string, viaAlias: boolean): unknown {
    if (node instanceof Alias) {
      const target = this.source.resolve(node);
      if (target === undefined) this.fail(node, `unresolved alias ${goQuote(node.source)}`);
      return this.decode(target, spec, path, true);
    }
    if (viaAlias && ++this.expanded > MAX_ALIAS_EXPANSION) {
      this.fail(node as Node, 'excessive alias expansion');
    }
    if (node === null || node === undefined || (isScalar(node) && node.value === null)) return zeroValue(spec);
    switch (spec.kind) {
      case 'string':
        if (isScalar(node) && typeof node.value === 'string') return node.value;
        return this.typeError(node, path, 'a string');
      case 'int':
      case 'optional_int':
        if (isScalar(node) && typeof node.value === 'bigint') {
          if (node.value > BigInt(Number.MAX_SAFE_INTEGER) || node.value < BigInt(Number.MIN_SAFE_INTEGER)) {
            this.fail(node, `${label(path)} is out of range`);
          }
          return Number(node.value);
        }
        return this.typeError(node, path, 'an integer');
      case 'float':
        if (isScalar(node) && (typeof node.value === 'bigint' || typeof node.value === 'number')) {
          return Number(node.value);
        }
        return this.typeError(node, path, 'a number');
      case 'bool':
      case 'optional_bool':
        if (isScalar(node) && typeof node.value === 'boolean') return node.value;
        return this.typeError(node, path, 'a boolean (true or false)');
      case 'string_list':
        if (!isSeq(node)) return this.typeError(node, path, 'a list of strings');
        return node.items.map((item, i) => this.decode(item, { kind: 'string' }, `${path}[${i}]`, viaAlias));
      case 'object_list':
        if (!isSeq(node)) return this.typeError(node, path, 'a list of mappings');
        return node.items.map((item, i) => this.decode(item, spec.item, `${path}[${i}]`, viaAlias));
      case 'object':
        if (!isMap(node)) return this.typeError(node, path, 'a mapping');
        return this.decodeObject(node.items, spec, path, viaAlias);
    }
  }

  private decodeObject(pairs: readonly Pair[], spec: ObjectSpec, path: string, viaAlias: boolean): unknown {
    const out = zeroValue(spec) as Record<string, unknown>;
    const entries = this.entries(pairs, new Set());
    for (const { key, keyNode, value, merged } of entries.values()) {
      const field = spec.fields[key];
      if (field === undefined) this.fail(keyNode, `unknown field ${goQuote(key)}`, unknownFieldHint(key, Object.keys(spec.fields), path));
      const fieldPath = path === '' ? key : `${path}.${key}`;
      // `tool_name: [a, b]` where the list form is `tool_names`: say so instead of only "not a list".
      if (field.kind === 'string' && isSeq(value) && spec.fields[`${key}s`]?.kind === 'string_list') {
        this.fail(value as Node, `${fieldPath} must be a string, got a list`, `did you mean ${goQuote(`${key}s`)}? (${key} takes one value, ${key}s a list)`);
      }
      out[key] = this.decode(value, field, fieldPath, viaAlias || merged);
    }
    return out;
  }

  /** Keys in document order; a `<<` merge contributes the keys the mapping does not set itself. */
  private entries(pairs: readonly Pair[], active: Set<unknown>): Map<string, Entry> {
    const out = new Map<string, Entry>();
    const merged: Map<string, Entry>[] = [];
    for (const pair of pairs) {
      if (isMergeKey(pair.key)) {
        merged.push(this.mergeSources(pair.value, active));
        continue;
      }
      const key = keyText(this.source, pair.key);
      out.set(key, { key, keyNode: pair.key as Node, value: pair.value, merged: false });
    }
    for (const source of merged) {
      for (const [key, entry] of source) if (!out.has(key)) out.set(key, { ...entry, merged: true });
    }
    return out;
  }

  private mergeSources(value: unknown, active: Set<unknown>): Map<string, Entry> {
    const out = new Map<string, Entry>();
    const sources = isSeq(value) ? value.items : [value];
    for (const item of sources) {
      const target = item instanceof Alias ? this.source.resolve(item) : item;
      if (!isMap(target)) this.fail((item ?? value) as Node, 'merge key "<<" needs a mapping or a list of mappings');
      if (active.has(target)) this.fail(item as Node, 'recursive merge');
      if (++this.expanded > MAX_ALIAS_EXPANSION) this.fail(item as Node, 'excessive alias expansion');
      active.add(target);
      // Earlier sources win over later ones, as in YAML's merge-key convention.
      for (const [key, entry] of this.entries(target.items, active)) if (!out.has(key)) out.set(key, entry);
      active.delete(target);
    }
    return out;
  }

  private typeError(node: unknown, path: string, expected: string): never {
    this.fail(node as Node, `${label(path)} must be ${expected}, got ${describe(node)}`);
  }

  private fail(node: Node | null | undefined, message: string, hint?: string): never {
    throw policyParseError(`${formatPos(nodePos(this.source, node))} ${message}`, hint);
  }
}

function unknownFieldHint(key: string, known: readonly string[], path: string): string {
  const near = closestMatch(key, known);
  const where = path === '' ? 'at the top level' : `in ${path}`;
  return near ? `did you mean ${goQuote(near)}?` : `fields ${where}: ${known.join(', ')}`;
}

interface Entry {
  key: string;
  keyNode: Node;
  value: unknown;
  /** Came from a `<<` merge, so it expands an anchor and counts against the alias budget. */
  merged: boolean;
}

function label(path: string): string {
  return path === '' ? 'policy' : path;
}

function describe(node: unknown): string {
  if (isMap(node)) return 'a mapping';
  if (isSeq(node)) return 'a list';
  if (isScalar(node)) {
    const v = node.value;
    if (typeof v === 'string') return `the string ${goQuote(v)}`;
    if (typeof v === 'bigint') return `the integer ${v.toString()}`;
    if (typeof v === 'number') return `the number ${String(v)}`;
    if (typeof v === 'boolean') return `the boolean ${String(v)}`;
  }
  return 'an unsupported value';
}
