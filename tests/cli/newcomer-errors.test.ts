import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO, tempDir, ward } from './run.js';

/* Issue 15: common mistakes get an error that says what the file is and what to do (exit 6). */

let dir: string;
const INTENT = '{"tool_name":"fs.read","args":{},"targets":[],"context":{"identity":"a","workspace":"/w","risk_class":"low"}}';
const POLICY = 'default_verdict: allow\nrules: []\n';

beforeAll(() => {
  dir = tempDir();
  copyFileSync(join(REPO, 'package.json'), join(dir, 'package.json'));
  writeFileSync(join(dir, 'intent.json'), INTENT);
  writeFileSync(join(dir, 'policy.yaml'), POLICY);
});

const run = (args: string[]) => ward(args, { cwd: dir });

describe('files passed in the wrong place', () => {
  it('package.json as a policy', () => {
    const r = run(['check', '--policy', 'package.json']);
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('this looks like a package.json, not a policy');
    expect(r.stderr).not.toContain('.gait.yaml');
  });

  it('an intent as the policy, and a policy as the intent', () => {
    const swapped = run(['gate', 'eval', '--policy', 'intent.json', '--intent', 'policy.yaml']);
    expect(swapped.code).toBe(6);
    expect(swapped.stderr).toContain('this looks like an intent request (gait.gate.intent_request), not a policy');
    expect(swapped.stderr).toContain('pass this file as --intent');
    const asIntent = run(['gate', 'eval', '--policy', 'policy.yaml', '--intent', 'policy.yaml']);
    expect(asIntent.code).toBe(6);
    expect(asIntent.stderr).toContain('this looks like a policy (YAML), not JSON: pass it as --policy');
  });
});

describe('spelling mistakes', () => {
  it('camelCase intent keys', () => {
    writeFileSync(join(dir, 'camel.json'), INTENT.replace('"tool_name"', '"toolName"'));
    const r = run(['gate', 'eval', '--policy', 'policy.yaml', '--intent', 'camel.json']);
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('error: tool_name is required');
    expect(r.stderr).toContain('intent keys are snake_case: toolName → tool_name');
  });

  it('match.tool_name given a list', () => {
    writeFileSync(join(dir, 'tn.yaml'), 'rules:\n  - { name: x, effect: block, match: { tool_name: [fs.delete] } }\n');
    const r = run(['check', '--policy', 'tn.yaml']);
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('did you mean "tool_names"?');
  });
});

describe('inputs far too large for what they claim to be', () => {
  it('a multi-megabyte non-policy is refused at once, without echoing it', () => {
    writeFileSync(join(dir, 'big.yaml'), 'x'.repeat(5 * 1024 * 1024));
    const r = run(['check', '--policy', 'big.yaml']);
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('the limit is 4 MiB');
    expect(r.stderr.length).toBeLessThan(1000);
  });

  it('a YAML error about a huge line quotes a short excerpt', () => {
    writeFileSync(join(dir, 'line.yaml'), `rules: [${'a'.repeat(200_000)}`);
    const r = run(['check', '--policy', 'line.yaml']);
    expect(r.code).toBe(6);
    expect(r.stderr.length).toBeLessThan(1500);
  });

  it('an intent over the input limit', () => {
    writeFileSync(join(dir, 'huge.json'), `{"tool_name":"x","pad":"${'a'.repeat(17 * 1024 * 1024)}"}`);
    const r = run(['gate', 'eval', '--policy', 'policy.yaml', '--intent', 'huge.json']);
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('over the 16 MiB input limit');
  });
});

describe('nesting 5,000 deep', () => {
  it('a policy says it is nested too deeply, not "Maximum call stack size exceeded"', () => {
    writeFileSync(join(dir, 'deep.yaml'), `rules:\n  - { name: x, effect: block, match: { tool_names: ${'['.repeat(5000)}a${']'.repeat(5000)} } }\n`);
    const r = run(['check', '--policy', 'deep.yaml']);
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('the document is nested too deeply');
    expect(r.stderr).not.toContain('call stack');
  });

  it('an intent says which part nests too deeply', () => {
    writeFileSync(join(dir, 'deep.json'), INTENT.replace('"args":{}', `"args":{"a":${'['.repeat(5000)}1${']'.repeat(5000)}}`));
    const r = run(['gate', 'eval', '--policy', 'policy.yaml', '--intent', 'deep.json']);
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('args nests deeper than 100 levels');
  });
});

describe('a token file that is not there', () => {
  it('--approval-token names the missing file, beside approval_token_invalid', () => {
    writeFileSync(join(dir, 'ask.yaml'), 'default_verdict: require_approval\n');
    const r = run(['gate', 'eval', '--policy', 'ask.yaml', '--intent', 'intent.json', '--approval-token', 'nope.json', '--json']);
    expect(r.code).toBe(4);
    expect(JSON.parse(r.stdout).reason_codes).toContain('approval_token_invalid');
    expect(r.stderr).toContain(`warning: approval token nope.json: no such file (${join(dir, 'nope.json')})`);
  });
});

describe('a directory where a file is expected', () => {
  it.each([
    [['pack', 'verify', 'packs'], 'pack or runpack'],
    [['pack', 'inspect', 'packs'], 'pack or runpack'],
    [['verify', 'packs'], 'runpack'],
  ])('%j names the path and what was expected (exit 6)', (args, what) => {
    mkdirSync(join(dir, 'packs'), { recursive: true });
    const r = run([...args, '--json']);
    expect(r.code).toBe(6);
    expect(JSON.parse(r.stdout)).toMatchObject({
      ok: false,
      error: `packs is a directory; expected a ${what} zip file`,
      error_category: 'invalid_input',
      retryable: false,
    });
  });
});
