// LangChain.js (`@langchain/core`): tools made with `tool(fn, { name, description, schema })`, the
// function guarded by Ward. The chat model is a stub returning a real AIMessage with two tool calls
// (read notes.txt, then delete it); each call is invoked as LangChain's ToolNode does, and a refused
// one becomes an error ToolMessage whose content is `modelToolError`'s: the model reads why.
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { WardBlockedError, modelToolError } from 'ward';
import { describeFileCall, exampleWard, fileTools, logDecision, makeWorkspace, stillExists } from '../shared/files.mjs';

const workspace = makeWorkspace();
const ward = exampleWard();
const raw = fileTools(workspace);

const guarded = (name, description) =>
  tool(ward.guardTool(raw[name], (args) => describeFileCall(workspace, name, args)), { name, description, schema: z.object({ path: z.string() }) });
const tools = [guarded('read_file', 'read a file in the workspace'), guarded('delete_file', 'delete a file in the workspace')];
const toolsByName = Object.fromEntries(tools.map((t) => [t.name, t]));

/** The stub model's answer to the user: tool calls, as `model.bindTools(tools).invoke(messages)` returns them. */
const ai = new AIMessage({
  content: '',
  tool_calls: [
    { id: 'tc_1', name: 'read_file', args: { path: 'notes.txt' }, type: 'tool_call' },
    { id: 'tc_2', name: 'delete_file', args: { path: 'notes.txt' }, type: 'tool_call' },
  ],
});
const messages = [new HumanMessage('Read notes.txt, then clean it up.'), ai];
for (const call of ai.tool_calls) {
  try {
    // Invoked with the tool call itself, a LangChain tool answers with a ToolMessage.
    const message = await toolsByName[call.name].invoke(call);
    logDecision(call.name, { output: message.content });
    messages.push(message);
  } catch (err) {
    if (!(err instanceof WardBlockedError)) throw err;
    logDecision(call.name, { error: err });
    messages.push(new ToolMessage({ tool_call_id: call.id, name: call.name, status: 'error', content: modelToolError(err) }));
  }
}
console.log('the model read:');
for (const m of messages.filter((m) => m instanceof ToolMessage)) console.log(`${m.name}: ${m.content}`);
console.log(`notes.txt still exists: ${stillExists(workspace, 'notes.txt')}`);
console.log(`signed traces: ${ward.traceDir}`);
