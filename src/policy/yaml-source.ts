import { Alias, CST, isMap, isNode, isScalar, isSeq, LineCounter, Parser, parseDocument, visit, type Document, type Node, type YAMLError } from 'yaml';
import { goQuote } from './go-quote.js';
import { formatPos, policyParseError, type SourcePos } from './invalid.js';

/**
 * A parsed policy YAML document with source positions. Construction performs the checks the
 * reference's YAML parser does before any decoding: syntax, a single document, no duplicate keys.
 */
export interface YamlSource {
  readonly doc: Document.Parsed;
  /** 1-based line and code-point column of a source offset. */
  pos(offset: number): SourcePos;
  /** The node an alias refers to: the closest preceding anchor of that name. */
  resolve(alias: Alias): Node | undefined;
}

const TOO_DEEP_HINT = 'a policy nests a few levels deep (rules → match → lists); check that this is the policy file you meant';

export function parseYamlSource(text: string): YamlSource {
  const lineCounter = new LineCounter();
  let doc: Document.Parsed;
  try {
    doc = parseYaml(text, lineCounter);
  } catch (err) {
    // The YAML parser recurses per nesting level; thousands of levels exhaust the stack.
    if (err instanceof RangeError) throw policyParseError('the document is nested too deeply', TOO_DEEP_HINT);
    throw err;
  }
  const first = doc.errors[0];
  const pos = (offset: number) => positionOf(text, lineCounter, offset);
  if (first && /Maximum call stack size exceeded/.test(first.message)) {
    throw policyParseError(`${formatPos(pos(first.pos[0]))} the document is nested too deeply`, TOO_DEEP_HINT);
  }
  if (first) throw policyParseError(syntaxErrorMessage(text, first, pos));
  const anchors = indexAnchors(doc);
  const source: YamlSource = { doc, pos, resolve: (alias) => resolveAlias(anchors, alias) };
  checkDuplicateKeys(source, doc.contents);
  return source;
}

/**
 * The parser reports an unclosed quote, `[` or `{` where it gave up — often the line after, or the
 * end of the file — so the message leads with the line where the construct opened.
 */
function syntaxErrorMessage(text: string, err: YAMLError, pos: (offset: number) => SourcePos): string {
  const at = formatPos(pos(err.pos[0]));
  const unclosed = err.code === 'MISSING_CHAR' || (err.code === 'BAD_INDENT' && /^Flow (map|sequence)/.test(err.message));
  const opened = unclosed ? unclosedOpener(text, err.pos[0]) : undefined;
  if (opened === undefined) return `${at} ${err.message}`;
  return `${formatPos(pos(opened.offset))} this ${opened.what} is never closed (the parser stopped at ${at}: ${err.message})`;
}

/** The last quoted scalar, flow sequence or flow map that opens before `before` and does not close. */
function unclosedOpener(text: string, before: number): { offset: number; what: string } | undefined {
  let found: { offset: number; what: string } | undefined;
  const consider = (token: CST.Token | undefined) => {
    if (!token) return;
    if (token.type === 'flow-collection') {
      const open = token.start.source;
      const close = open === '[' ? ']' : '}';
      if (token.start.offset < before && !token.end.some((t) => t.source === close) && (!found || token.start.offset > found.offset)) {
        found = { offset: token.start.offset, what: open };
      }
    } else if (token.type === 'double-quoted-scalar' || token.type === 'single-quoted-scalar') {
      const quote = token.source[0]!;
      const closed = token.source.length > 1 && token.source.endsWith(quote) && !(quote === '"' && /(^|[^\\])(\\\\)*\\"$/.test(token.source));
      if (!closed && token.offset < before && (!found || token.offset > found.offset)) found = { offset: token.offset, what: `${quote} quote` };
    }
  };
  for (const token of new Parser().parse(text)) {
    if (token.type !== 'document') continue;
    CST.visit(token, (item) => {
      consider(item.key ?? undefined);
      consider(item.value);
    });
  }
  return found;
}

function parseYaml(text: string, lineCounter: LineCounter): Document.Parsed {
  return parseDocument(text, {
    schema: 'core',
    version: '1.2',
    // Duplicates are reported by checkDuplicateKeys with both positions, as the reference does.
    uniqueKeys: false,
    // Keeps integers and floats apart: `priority: 1.5` must not pass as an integer.
    intAsBigInt: true,
    prettyErrors: false,
    lineCounter,
  });
}

/** The position of a node's first character. */
export function nodePos(source: YamlSource, node: Node | null | undefined): SourcePos {
  return source.pos(node?.range?.[0] ?? 0);
}

/**
 * A mapping key as the reference's decoder sees it: the scalar's text. Non-scalar keys cannot name
 * a field and are rejected.
 */
export function keyText(source: YamlSource, key: unknown): string {
  if (isScalar(key)) {
    const v = key.value;
    return v === null || v === undefined ? '' : String(v);
  }
  throw policyParseError(`${formatPos(nodePos(source, key as Node))} mapping key must be a scalar`);
}

/** A plain `<<` key: a YAML merge of the aliased mapping(s), which the reference's parser supports. */
export function isMergeKey(key: unknown): boolean {
  return isScalar(key) && key.value === '<<' && key.type === 'PLAIN';
}

function checkDuplicateKeys(source: YamlSource, node: unknown): void {
  if (isMap(node)) {
    const seen = new Map<string, SourcePos>();
    for (const pair of node.items) {
      if (!isMergeKey(pair.key)) {
        const key = keyText(source, pair.key);
        const here = nodePos(source, pair.key as Node);
        const earlier = seen.get(key);
        if (earlier) {
          throw policyParseError(
            `${formatPos(here)} mapping key ${goQuote(key)} already defined at ${formatPos(earlier)}`,
          );
        }
        seen.set(key, here);
      }
      checkDuplicateKeys(source, pair.value);
    }
  } else if (isSeq(node)) {
    for (const item of node.items) checkDuplicateKeys(source, item);
  } else if (node instanceof Alias) {
    return;
  }
}

interface Anchor {
  offset: number;
  node: Node;
}

/**
 * yaml's own `Alias.resolve` rescans the document on every call, which makes many aliases
 * quadratic; one index keeps resolution cheap even for hostile input.
 */
function indexAnchors(doc: Document.Parsed): Map<string, Anchor[]> {
  const anchors = new Map<string, Anchor[]>();
  visit(doc, (_key, node) => {
    if (isNode(node) && !(node instanceof Alias) && node.anchor) {
      const list = anchors.get(node.anchor) ?? [];
      list.push({ offset: node.range?.[0] ?? 0, node });
      anchors.set(node.anchor, list);
    }
  });
  return anchors;
}

function resolveAlias(anchors: Map<string, Anchor[]>, alias: Alias): Node | undefined {
  const at = alias.range?.[0] ?? 0;
  let found: Node | undefined;
  for (const anchor of anchors.get(alias.source) ?? []) if (anchor.offset < at) found = anchor.node;
  return found;
}

function positionOf(text: string, lineCounter: LineCounter, offset: number): SourcePos {
  const starts = lineCounter.lineStarts;
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= offset) lo = mid;
    else hi = mid - 1;
  }
  const lineStart = starts[lo] ?? 0;
  let col = 1;
  for (let i = lineStart; i < offset && i < text.length; i++) {
    const code = text.charCodeAt(i);
    // The second half of a surrogate pair is the same code point.
    if (code < 0xdc00 || code > 0xdfff) col++;
  }
  return { line: lo + 1, col };
}
