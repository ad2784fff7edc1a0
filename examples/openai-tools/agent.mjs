// OpenAI chat completions with tools, guarded by Ward. The model is a stub that answers in the
// chat.completions response shape (`choices[0].message.tool_calls`), so this runs offline; with
// the real client, replace `model.create` by `openai.chat.completions.create`.
import { WardBlockedError } from 'ward';
import { describeFileCall, exampleWard, fileTools, makeWorkspace, stillExists } from '../shared/files.mjs';

const workspace = makeWorkspace();
const ward = exampleWard();
const raw = fileTools(workspace);

// Each tool runs only when Ward allows it; otherwise WardBlockedError is thrown and nothing happens.
const tools = {
  read_file: ward.guardTool(raw.read_file, (args) => describeFileCall(workspace, 'read_file', args)),
  delete_file: ward.guardTool(raw.delete_file, (args) => describeFileCall(workspace, 'delete_file', args)),
};

const toolSpecs = ['read_file', 'delete_file'].map((name) => ({
  type: 'function',
  function: {
    name,
    description: `${name.replace('_', ' ')} in the workspace`,
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
}));

/** A scripted model: first it asks for two tool calls, then it answers. */
const model = {
  turn: 0,
  async create({ messages, tools }) {
    if (!tools?.length || !messages.length) throw new Error('stub model expects messages and tools');
    const call = (id, name, args) => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } });
    const message =
      this.turn++ === 0
        ? { role: 'assistant', content: null, tool_calls: [call('call_1', 'read_file', { path: 'notes.txt' }), call('call_2', 'delete_file', { path: 'notes.txt' })] }
        : { role: 'assistant', content: 'I read the notes; deleting them was not allowed.' };
    return { choices: [{ index: 0, message, finish_reason: message.tool_calls ? 'tool_calls' : 'stop' }] };
  },
};

const messages = [{ role: 'user', content: 'Read notes.txt, then clean it up.' }];
for (;;) {
  const { message } = (await model.create({ model: 'stub', messages, tools: toolSpecs })).choices[0];
  messages.push(message);
  if (!message.tool_calls) {
    console.log(`assistant: ${message.content}`);
    break;
  }
  for (const call of message.tool_calls) {
    const args = JSON.parse(call.function.arguments);
    let content;
    try {
      content = await tools[call.function.name](args);
      console.log(`${call.function.name}: allow -> ${JSON.stringify(content)}`);
    } catch (err) {
      if (!(err instanceof WardBlockedError)) throw err;
      console.log(`${call.function.name}: ${err.verdict} (${err.reasonCodes.join(', ')}) trace ${err.traceId}`);
      content = JSON.stringify({ error: 'blocked by policy', reason_codes: err.reasonCodes, trace_id: err.traceId });
    }
    messages.push({ role: 'tool', tool_call_id: call.id, content });
  }
}
console.log(`notes.txt still exists: ${stillExists(workspace, 'notes.txt')}`);
console.log(`signed traces: ${ward.traceDir}`);
