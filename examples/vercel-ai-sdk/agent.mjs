// The Vercel AI SDK (`ai`): `generateText` with tools whose `execute` is guarded by Ward. The
// model is the SDK's own mock (no API key, no network): step 1 asks to read notes.txt and then
// delete it; step 2 answers with what the tool results said. A refused call reaches the model as
// a tool error whose text is `modelToolError`'s: the verdict and what each reason code means.
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { WardBlockedError, modelToolError } from 'ward';
import { describeFileCall, exampleWard, fileTools, logDecision, makeWorkspace, stillExists } from '../shared/files.mjs';

const workspace = makeWorkspace();
const ward = exampleWard();
const raw = fileTools(workspace);

/** Guarded by Ward; a refusal is rethrown with the text the model should read. */
const guarded = (name) => {
  const run = ward.guardTool(raw[name], (input) => describeFileCall(workspace, name, input));
  return async (input) => {
    try {
      const output = await run(input);
      logDecision(name, { output });
      return output;
    } catch (err) {
      if (!(err instanceof WardBlockedError)) throw err;
      logDecision(name, { error: err });
      throw new Error(modelToolError(err), { cause: err });
    }
  };
};

const tools = {
  read_file: tool({ description: 'read a file in the workspace', inputSchema: z.object({ path: z.string() }), execute: guarded('read_file') }),
  delete_file: tool({ description: 'delete a file in the workspace', inputSchema: z.object({ path: z.string() }), execute: guarded('delete_file') }),
};

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
let step = 0;
const model = new MockLanguageModelV3({
  doGenerate: async ({ prompt }) => {
    if (step++ === 0) {
      return {
        content: [
          { type: 'tool-call', toolCallId: 'call_a', toolName: 'read_file', input: JSON.stringify({ path: 'notes.txt' }) },
          { type: 'tool-call', toolCallId: 'call_b', toolName: 'delete_file', input: JSON.stringify({ path: 'notes.txt' }) },
        ],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    }
    // What the model was given back for each call, as the SDK built its prompt.
    const results = prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content);
    const text = results.map((r) => `${r.toolName}: ${r.output.value}`).join('\n');
    return { content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
  },
});

const result = await generateText({ model, tools, prompt: 'read notes.txt, then delete it', stopWhen: stepCountIs(2) });
console.log('the model read:');
console.log(result.text);
console.log(`notes.txt still exists: ${stillExists(workspace, 'notes.txt')}`);
console.log(`signed traces: ${ward.traceDir}`);
