/**
 * A small strict XML 1.0 reader for the JUnit files regress writes: one prolog, one root,
 * properly nested elements, double- or single-quoted attributes without duplicates, only the five
 * predefined entities and character references, no stray `<` or `&`. Throws on anything else.
 */
export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const NAME = /^[A-Za-z_:][A-Za-z0-9_.:-]*/;
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

export function parseXml(input: string): XmlElement {
  let i = 0;
  const fail = (msg: string): never => {
    throw new Error(`xml: ${msg} at offset ${i}`);
  };
  const prolog = '<?xml version="1.0" encoding="UTF-8"?>';
  if (!input.startsWith(prolog)) fail('missing or unexpected XML declaration');
  i = prolog.length;
  const skipSpace = () => {
    while (i < input.length && /[ \t\r\n]/.test(input[i]!)) i++;
  };
  const decode = (raw: string): string => {
    if (raw.includes('<')) fail('"<" in text or attribute');
    return raw.replace(/&([^;]*);|&/g, (m, ref: string | undefined) => {
      if (ref === undefined) return fail('bare "&"');
      if (ref in ENTITIES) return ENTITIES[ref]!;
      const num = /^#x([0-9A-Fa-f]+)$/.exec(ref) ?? /^#([0-9]+)$/.exec(ref);
      if (!num) return fail(`unknown entity ${m}`);
      return String.fromCodePoint(parseInt(num[1]!, ref.startsWith('#x') ? 16 : 10));
    });
  };
  const readName = (): string => {
    const m = NAME.exec(input.slice(i));
    if (!m) return fail('expected a name');
    i += m[0].length;
    return m[0];
  };
  const element = (): XmlElement => {
    if (input[i] !== '<') fail('expected "<"');
    i++;
    const el: XmlElement = { name: readName(), attributes: {}, children: [], text: '' };
    for (;;) {
      const before = i;
      skipSpace();
      if (input.startsWith('/>', i)) {
        i += 2;
        return el;
      }
      if (input[i] === '>') {
        i++;
        break;
      }
      if (i === before) fail('expected whitespace before an attribute');
      const attr = readName();
      if (attr in el.attributes) fail(`duplicate attribute ${attr}`);
      skipSpace();
      if (input[i] !== '=') fail('expected "="');
      i++;
      skipSpace();
      const quote = input[i];
      if (quote !== '"' && quote !== "'") fail('expected a quoted value');
      const end = input.indexOf(quote!, i + 1);
      if (end < 0) fail('unterminated attribute');
      el.attributes[attr] = decode(input.slice(i + 1, end));
      i = end + 1;
    }
    for (;;) {
      const next = input.indexOf('<', i);
      if (next < 0) fail(`unclosed element ${el.name}`);
      el.text += decode(input.slice(i, next));
      i = next;
      if (input.startsWith('</', i)) {
        i += 2;
        const close = readName();
        if (close !== el.name) fail(`</${close}> closes <${el.name}>`);
        skipSpace();
        if (input[i] !== '>') fail('expected ">"');
        i++;
        return el;
      }
      if (input.startsWith('<!--', i) || input.startsWith('<?', i) || input.startsWith('<!', i)) fail('unexpected markup');
      el.children.push(element());
    }
  };
  skipSpace();
  const root = element();
  skipSpace();
  if (i !== input.length) fail('content after the root element');
  return root;
}

/**
 * The JUnit subset regress writes (the attributes the common JUnit XSD defines for these
 * elements, and nothing else), with counts that add up. Returns the testcases.
 */
export function checkJunit(xml: string): { classname: string; name: string; failure?: string }[] {
  const root = parseXml(xml);
  const attrs = (el: XmlElement, allowed: string[]) => {
    if (Object.keys(el.attributes).sort().join() !== [...allowed].sort().join()) throw new Error(`<${el.name}> attributes ${Object.keys(el.attributes)} != ${allowed}`);
  };
  const int = (v: string | undefined) => {
    if (!/^\d+$/.test(v ?? '')) throw new Error(`not a count: ${v}`);
    return Number(v);
  };
  if (root.name !== 'testsuites') throw new Error('root must be <testsuites>');
  attrs(root, ['tests', 'failures', 'errors', 'skipped', 'time']);
  if (root.children.length !== 1 || root.children[0]!.name !== 'testsuite') throw new Error('exactly one <testsuite>');
  const suite = root.children[0]!;
  attrs(suite, ['name', 'tests', 'failures', 'errors', 'skipped', 'time']);
  const cases = suite.children.map((tc) => {
    if (tc.name !== 'testcase') throw new Error(`unexpected <${tc.name}>`);
    attrs(tc, ['name', 'classname', 'time']);
    if (tc.attributes['time'] !== '0') throw new Error('time must be 0');
    if (tc.children.length > 1) throw new Error('at most one <failure>');
    const failure = tc.children[0];
    if (failure) {
      if (failure.name !== 'failure') throw new Error(`unexpected <${failure.name}>`);
      attrs(failure, ['message', 'type']);
      if (failure.text !== failure.attributes['message']) throw new Error('failure body must repeat the message');
    }
    if (tc.text.trim() !== '') throw new Error('text in <testcase>');
    return { classname: tc.attributes['classname']!, name: tc.attributes['name']!, ...(failure ? { failure: failure.attributes['message']! } : {}) };
  });
  const failures = cases.filter((c) => c.failure !== undefined).length;
  for (const el of [root, suite]) {
    if (int(el.attributes['tests']) !== cases.length) throw new Error('tests count');
    if (int(el.attributes['failures']) !== failures) throw new Error('failures count');
    if (int(el.attributes['errors']) !== 0 || int(el.attributes['skipped']) !== 0 || el.attributes['time'] !== '0') throw new Error('errors/skipped/time');
  }
  return cases;
}
