// `ward doctor --json` check names are public API: every name the code can report has a row in
// docs/getting-started.md#doctor-checks, and every row names a check the code reports.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { AGENT_SETUPS } from '../../src/cli/agent-config.js';
import { REPO } from '../cli/run.js';

it('every doctor check name is documented, and every documented name is reported by the code', () => {
  const source = readFileSync(join(REPO, 'src/cli/commands/onboard.ts'), 'utf8');
  const inCode = new Set([...source.matchAll(/name: '([a-z_]+)', scope/g)].map((m) => m[1]!));
  for (const setup of Object.values(AGENT_SETUPS)) inCode.add(setup.doctorCheck);
  expect(inCode.size).toBeGreaterThanOrEqual(12);

  const doc = readFileSync(join(REPO, 'docs/getting-started.md'), 'utf8');
  const table = doc.slice(doc.indexOf('## Doctor checks'));
  const documented = new Set([...table.matchAll(/^\| `([a-z_]+)` \| (universal|repo_checkout) \|/gm)].map((m) => m[1]!));
  expect([...documented].sort()).toEqual([...inCode].sort());
});
