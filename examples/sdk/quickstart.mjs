import { Ward, WardBlockedError, intent } from 'ward';

const ward = new Ward({ policy: 'policies/baseline-highrisk.yaml' }); // traces and key in the nearest .ward/

const deleteFile = ward.guardTool(
  async (path) => `deleted ${path}`, // your real tool
  (path) =>
    intent
      .tool('fs.delete_file')
      .args({ path })
      .target({ kind: 'path', value: path, operation: 'delete' })
      .provenance('$.path', 'tool_output')
      .context({ identity: 'agent.docs', workspace: '/workspace', risk_class: 'high' })
      .build(),
);

try {
  await deleteFile('/workspace/prod.db');
} catch (err) {
  if (!(err instanceof WardBlockedError)) throw err;
  console.log(`${err.verdict}: ${err.reasonCodes.join(', ')} (trace ${err.traceId})`);
}

const read = await ward.evaluate(
  intent({
    tool_name: 'fs.read_file',
    args: { path: '/workspace/report.md' },
    targets: [{ kind: 'path', value: '/workspace/report.md', operation: 'read' }],
    arg_provenance: [{ arg_path: '$.path', source: 'user' }],
    context: { identity: 'agent.docs', workspace: '/workspace', risk_class: 'high' },
  }),
);
console.log(`${read.verdict}: ${read.reasonCodes.join(', ')} -> ${read.tracePath}`);
