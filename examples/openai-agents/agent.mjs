// An @openai/agents Agent whose tools are guarded by Ward. The model is a stub (no API key, no
// network): its first turn asks to read notes.txt and then delete it; its second turn reports what
// the tool results said. `errorFunction` makes the model read Ward's reason for the refused call:
// the library's default would tell it only "An error occurred while running the tool".
import { Agent, run, setTracingDisabled, tool } from '@openai/agents';
import { Usage } from '@openai/agents-core';
import { z } from 'zod';
import { WardBlockedError, modelToolError } from 'ward';
import { describeFileCall, exampleWard, fileTools, logDecision, makeWorkspace, stillExists } from '../shared/files.mjs';

setTracingDisabled(true);
const workspace = makeWorkspace();
const ward = exampleWard();
const raw = fileTools(workspace);

const guarded = (name, description) => {
  const run = ward.guardTool(raw[name], (input) => describeFileCall(workspace, name, input));
  return tool({
    name,
    description,
    parameters: z.object({ path: z.string() }),
    execute: async (input) => {
      try {
        const output = await run(input);
        logDecision(name, { output });
        return output;
      } catch (err) {
        if (err instanceof WardBlockedError) logDecision(name, { error: err });
        throw err;
      }
    },
    errorFunction: (_context, error) => modelToolError(error),
  });
};

/** A stub model: tool calls first, then one message quoting the tool results it was given. */
const stubModel = {
  turns: 0,
  async getResponse(request) {
    const usage = new Usage();
    if (this.turns++ === 0) {
      return {
        usage,
        output: [
          { type: 'function_call', callId: 'call_a', name: 'read_file', arguments: JSON.stringify({ path: 'notes.txt' }), status: 'completed' },
          { type: 'function_call', callId: 'call_b', name: 'delete_file', arguments: JSON.stringify({ path: 'notes.txt' }), status: 'completed' },
        ],
      };
    }
    const results = request.input.filter((item) => item.type === 'function_call_result');
    const seen = results.map((r) => `${r.name}: ${r.output.type === 'text' ? r.output.text : JSON.stringify(r.output)}`);
    return { usage, output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: seen.join('\n') }] }] };
  },
  async *getStreamedResponse() {
    throw new Error('not used');
  },
};

const agent = new Agent({
  name: 'files',
  instructions: 'Work with the files in the workspace.',
  model: stubModel,
  tools: [guarded('read_file', 'read a file in the workspace'), guarded('delete_file', 'delete a file in the workspace')],
});

const result = await run(agent, 'read notes.txt, then delete it');
console.log('the model read:');
console.log(result.finalOutput);
console.log(`notes.txt still exists: ${stillExists(workspace, 'notes.txt')}`);
console.log(`signed traces: ${ward.traceDir}`);
