import { spawnSync } from 'node:child_process';
import { Ward, intent } from 'ward';

// Writes need a person's approval; everything else is blocked.
const policy = `schema_id: gait.gate.policy
schema_version: 1.0.0
default_verdict: block
rules:
  - name: approve-writes
    priority: 10
    effect: require_approval
    match:
      tool_names: [fs.write_file]
`;

const ward = new Ward({ policy }); // key, traces and approvals in the nearest .ward/

const writeConfig = ward.guardTool(
  async (path, content) => `wrote ${content.length} bytes to ${path}`, // your real tool
  (path, content) =>
    intent
      .tool('fs.write_file')
      .args({ path, content })
      .target({ kind: 'path', value: path, operation: 'write' })
      .context({ identity: 'agent.docs', workspace: '/workspace', risk_class: 'low' })
      .build(),
  {
    // Called on require_approval: show a person the command, wait for the token it writes.
    onApprovalRequired: async (request) => {
      console.log(`approval needed for ${request.scope.join(', ')}; a person runs:\n  ${request.command}`);
      // In this example the "person" is this script: the command runs verbatim in a shell.
      spawnSync('sh', ['-c', request.command], { cwd: '/', stdio: 'ignore' });
      const token = await request.waitForToken({ timeoutMs: 60_000 });
      console.log(`approval token ${token.tokenId} is in ${request.approvalDir}`);
      return true; // decide the call again: the token grants it, once
    },
  },
);

console.log(await writeConfig('/workspace/config.yaml', 'replicas: 3'));
await ward.close();
