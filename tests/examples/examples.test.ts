import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadKeyRing, verifyTracePath } from '../../src/index.js';
import { REPO, tempDir } from '../cli/run.js';

/** Every SDK example: a stubbed model asks for one allowed and one blocked call. */
const EXAMPLES = ['openai-tools', 'anthropic-tool-use', 'vercel-ai-sdk', 'langchain', 'openai-agents'];
/** The examples that run the real framework package (devDependencies), with a stub model. */
const REAL_FRAMEWORKS = ['vercel-ai-sdk', 'langchain', 'openai-agents'];

function runExample(name: string, stateDir: string) {
  const r = spawnSync(process.execPath, [join(REPO, 'examples', name, 'agent.mjs')], {
    cwd: REPO,
    encoding: 'utf8',
    env: { ...process.env, WARD_STATE_DIR: stateDir },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Each example runs once, in a state directory of its own, and every test below asserts on that
 * run (its output and the traces it left): a real framework takes seconds to load.
 */
const runs = new Map<string, { stateDir: string } & ReturnType<typeof runExample>>();
function ranExample(name: string) {
  let run = runs.get(name);
  if (!run) {
    const stateDir = tempDir('ward-example-state-');
    run = { stateDir, ...runExample(name, stateDir) };
    runs.set(name, run);
  }
  return run;
}

describe.each(EXAMPLES)('examples/%s', (name) => {
  it('runs offline: the read is allowed, the delete is blocked and its side effect never happens', () => {
    const r = ranExample(name);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines).toContain('read_file: allow -> "ship the release on friday\\n"');
    expect(lines.find((l) => l.startsWith('delete_file: '))).toMatch(
      /^delete_file: block \(destructive_apply_requires_approval, matched_rule_block_destructive\) trace [0-9a-f]+$/,
    );
    expect(lines).toContain('notes.txt still exists: true');
    expect(lines).toContain(`signed traces: ${join(r.stateDir, 'traces')}`);
  });

  it('leaves one verifiable signed trace per decision', () => {
    const { code, stateDir } = ranExample(name);
    expect(code).toBe(0);
    const v = verifyTracePath(join(stateDir, 'traces'), loadKeyRing(stateDir));
    expect(v.summary).toEqual({ total: 2, verified: 2, failed: 0 });
    expect(v.results.map((x) => x.verdict).sort()).toEqual(['allow', 'block']);
  });
});

describe('the framework shapes', () => {
  it('each example feeds the refusal back to the model in that framework\'s own shape', () => {
    const expected: Record<string, string> = {
      'openai-tools': "assistant: I read the notes; deleting them was not allowed.",
      'anthropic-tool-use': 'assistant: Read them; the delete was refused.',
    };
    for (const name of Object.keys(expected)) {
      expect(ranExample(name).stdout.split('\n'), name).toContain(expected[name]);
    }
  });

  it.each(REAL_FRAMEWORKS)('%s (the real package): the model reads Ward\'s reason for the refusal, not a generic tool error', (name) => {
    const r = ranExample(name);
    expect(r.code, r.stderr).toBe(0);
    const read = r.stdout.slice(r.stdout.indexOf('the model read:\n'));
    expect(read).toContain('read_file: ship the release on friday');
    expect(read).toContain(
      'delete_file: Ward blocked delete_file (destructive_apply_requires_approval: destructive target in apply phase; matched_rule_block_destructive: ',
    );
    expect(read).not.toContain('An error occurred while running the tool');
  });
});
