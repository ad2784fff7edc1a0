// LangChain.js-style tools, guarded by Ward. This example does not install LangChain: the tool
// objects below have the shape `tool(fn, { name, description, schema })` from
// '@langchain/core/tools' produces ({ name, description, schema, invoke }), and the stubbed chat
// model returns an AIMessage-like object with `tool_calls: [{ id, name, args, type: 'tool_call' }]`.
// With real LangChain, wrap the function you pass to `tool(...)` with `ward.guardTool` the same way.
import { z } from 'zod';
import { WardBlockedError } from 'ward';
import { describeFileCall, exampleWard, fileTools, makeWorkspace, stillExists } from '../shared/files.mjs';

/** The structured-tool shape: `invoke` validates against `schema`, then calls the function. */
function tool(fn, { name, description, schema }) {
  return { name, description, schema, invoke: async (input) => fn(schema.parse(input)) };
}

const workspace = makeWorkspace();
const ward = exampleWard();
const raw = fileTools(workspace);

const readFile = tool(
  ward.guardTool(raw.read_file, (args) => describeFileCall(workspace, 'read_file', args)),
  { name: 'read_file', description: 'read a file in the workspace', schema: z.object({ path: z.string() }) },
);
const deleteFile = tool(
  ward.guardTool(raw.delete_file, (args) => describeFileCall(workspace, 'delete_file', args)),
  { name: 'delete_file', description: 'delete a file in the workspace', schema: z.object({ path: z.string() }) },
);
const toolsByName = { [readFile.name]: readFile, [deleteFile.name]: deleteFile };

/** A stubbed chat model bound to the tools (`model.bindTools(tools).invoke(messages)`). */
const model = {
  bindTools(tools) {
    return {
      async invoke(messages) {
        if (!tools.length || !messages.length) throw new Error('stub model expects tools and messages');
        return {
          content: '',
          tool_calls: [
            { id: 'tc_1', name: 'read_file', args: { path: 'notes.txt' }, type: 'tool_call' },
            { id: 'tc_2', name: 'delete_file', args: { path: 'notes.txt' }, type: 'tool_call' },
          ],
        };
      },
    };
  },
};

const messages = [{ role: 'user', content: 'Read notes.txt, then clean it up.' }];
const ai = await model.bindTools([readFile, deleteFile]).invoke(messages);
for (const call of ai.tool_calls) {
  let toolMessage;
  try {
    const content = await toolsByName[call.name].invoke(call.args);
    console.log(`${call.name}: allow -> ${JSON.stringify(content)}`);
    toolMessage = { role: 'tool', tool_call_id: call.id, content };
  } catch (err) {
    if (!(err instanceof WardBlockedError)) throw err;
    console.log(`${call.name}: ${err.verdict} (${err.reasonCodes.join(', ')}) trace ${err.traceId}`);
    toolMessage = { role: 'tool', tool_call_id: call.id, status: 'error', content: `blocked by policy: ${err.reasonCodes.join(', ')}` };
  }
  messages.push(toolMessage);
}
console.log(`tool messages: ${messages.length - 1}`);
console.log(`notes.txt still exists: ${stillExists(workspace, 'notes.txt')}`);
console.log(`signed traces: ${ward.traceDir}`);
