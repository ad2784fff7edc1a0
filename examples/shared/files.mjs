// The two file tools every SDK example exposes to its (stubbed) model, and how each call is
// described to Ward as an intent. Nothing here is framework-specific.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ward, intent } from 'ward';

export const POLICY = fileURLToPath(new URL('../agent-policy.yaml', import.meta.url));

/** A scratch workspace with one file the model will try to read and then delete. */
export function makeWorkspace() {
  const dir = mkdtempSync(join(tmpdir(), 'ward-example-'));
  writeFileSync(join(dir, 'notes.txt'), 'ship the release on friday\n');
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Ward with the example policy; traces go to $WARD_STATE_DIR or a fresh temp dir. */
export function exampleWard() {
  const stateDir = process.env.WARD_STATE_DIR || mkdtempSync(join(tmpdir(), 'ward-example-state-'));
  mkdirSync(stateDir, { recursive: true });
  return new Ward({ policy: POLICY, stateDir });
}

/** The unguarded tools: real side effects inside the workspace. */
export function fileTools(workspace) {
  return {
    read_file: async ({ path }) => readFileSync(resolve(workspace, path), 'utf8'),
    delete_file: async ({ path }) => {
      rmSync(resolve(workspace, path));
      return `deleted ${path}`;
    },
  };
}

/** How a call is described to Ward: which tool, on which path, doing what, for whom. */
export function describeFileCall(workspace, toolName, { path }) {
  const operation = toolName === 'delete_file' ? 'delete' : 'read';
  const target = resolve(workspace, path);
  return intent
    .tool(toolName)
    .args({ path: target })
    .target({ kind: 'path', value: target, operation })
    .provenance('$.path', 'user')
    .context({ identity: 'agent.example', workspace, risk_class: 'medium' })
    .build();
}

export function stillExists(workspace, path) {
  return existsSync(resolve(workspace, path));
}

/** One line per decision, as every example prints it: the verdict and, when refused, why and where the trace is. */
export function logDecision(name, outcome) {
  if (outcome.error) console.log(`${name}: ${outcome.error.verdict} (${outcome.error.reasonCodes.join(', ')}) trace ${outcome.error.traceId}`);
  else console.log(`${name}: allow -> ${JSON.stringify(outcome.output)}`);
}
