// Anthropic Messages API tool use, guarded by Ward. The model is a stub that answers in the
// messages.create response shape (`content` with `tool_use` blocks, `stop_reason: "tool_use"`),
// and each result goes back as a `tool_result` block. With the real SDK, replace `model.create`
// by `anthropic.messages.create`.
import { WardBlockedError } from 'ward';
import { describeFileCall, exampleWard, fileTools, makeWorkspace, stillExists } from '../shared/files.mjs';

const workspace = makeWorkspace();
const ward = exampleWard();
const raw = fileTools(workspace);

const tools = {
  read_file: ward.guardTool(raw.read_file, (input) => describeFileCall(workspace, 'read_file', input)),
  delete_file: ward.guardTool(raw.delete_file, (input) => describeFileCall(workspace, 'delete_file', input)),
};

const toolSpecs = ['read_file', 'delete_file'].map((name) => ({
  name,
  description: `${name.replace('_', ' ')} in the workspace`,
  input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
}));

/** A scripted model: one turn of tool_use blocks, then a text answer. */
const model = {
  turn: 0,
  async create({ messages, tools }) {
    if (!tools?.length || !messages.length) throw new Error('stub model expects messages and tools');
    if (this.turn++ === 0) {
      return {
        role: 'assistant',
        stop_reason: 'tool_use',
        content: [
          { type: 'text', text: 'Reading the notes, then removing them.' },
          { type: 'tool_use', id: 'toolu_01', name: 'read_file', input: { path: 'notes.txt' } },
          { type: 'tool_use', id: 'toolu_02', name: 'delete_file', input: { path: 'notes.txt' } },
        ],
      };
    }
    return { role: 'assistant', stop_reason: 'end_turn', content: [{ type: 'text', text: 'Read them; the delete was refused.' }] };
  },
};

const messages = [{ role: 'user', content: 'Read notes.txt, then clean it up.' }];
for (;;) {
  const response = await model.create({ model: 'stub', max_tokens: 1024, messages, tools: toolSpecs });
  messages.push({ role: 'assistant', content: response.content });
  if (response.stop_reason !== 'tool_use') {
    console.log(`assistant: ${response.content.find((b) => b.type === 'text').text}`);
    break;
  }
  const results = [];
  for (const block of response.content.filter((b) => b.type === 'tool_use')) {
    try {
      const output = await tools[block.name](block.input);
      console.log(`${block.name}: allow -> ${JSON.stringify(output)}`);
      results.push({ type: 'tool_result', tool_use_id: block.id, content: output });
    } catch (err) {
      if (!(err instanceof WardBlockedError)) throw err;
      console.log(`${block.name}: ${err.verdict} (${err.reasonCodes.join(', ')}) trace ${err.traceId}`);
      results.push({ type: 'tool_result', tool_use_id: block.id, is_error: true, content: `blocked by policy: ${err.reasonCodes.join(', ')}` });
    }
  }
  messages.push({ role: 'user', content: results });
}
console.log(`notes.txt still exists: ${stillExists(workspace, 'notes.txt')}`);
console.log(`signed traces: ${ward.traceDir}`);
