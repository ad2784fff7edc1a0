// The Vercel AI SDK `tool({ description, inputSchema, execute })` shape, guarded by Ward.
// This example does not install the `ai` package: `tool` below is the same identity helper the
// SDK exports, and `runTools` plays the part of `generateText` with a stubbed model that returns
// `toolCalls` ({ toolCallId, toolName, input }). With the real SDK, import `tool` from 'ai' and
// pass `tools` to `generateText({ model, tools, ... })` unchanged: only `execute` is wrapped.
import { z } from 'zod';
import { WardBlockedError } from 'ward';
import { describeFileCall, exampleWard, fileTools, makeWorkspace, stillExists } from '../shared/files.mjs';

const tool = (definition) => definition; // as in 'ai'

const workspace = makeWorkspace();
const ward = exampleWard();
const raw = fileTools(workspace);

const tools = {
  read_file: tool({
    description: 'read a file in the workspace',
    inputSchema: z.object({ path: z.string() }),
    execute: ward.guardTool(raw.read_file, (input) => describeFileCall(workspace, 'read_file', input)),
  }),
  delete_file: tool({
    description: 'delete a file in the workspace',
    inputSchema: z.object({ path: z.string() }),
    execute: ward.guardTool(raw.delete_file, (input) => describeFileCall(workspace, 'delete_file', input)),
  }),
};

/** A stubbed model step: the tool calls it wants. */
const modelToolCalls = [
  { type: 'tool-call', toolCallId: 'call_a', toolName: 'read_file', input: { path: 'notes.txt' } },
  { type: 'tool-call', toolCallId: 'call_b', toolName: 'delete_file', input: { path: 'notes.txt' } },
];

/** What generateText does with each call: validate the input, execute, collect results or errors. */
async function runTools(calls) {
  const steps = [];
  for (const call of calls) {
    const t = tools[call.toolName];
    const input = t.inputSchema.parse(call.input);
    try {
      const output = await t.execute(input, { toolCallId: call.toolCallId, messages: [] });
      steps.push({ type: 'tool-result', toolCallId: call.toolCallId, toolName: call.toolName, output });
      console.log(`${call.toolName}: allow -> ${JSON.stringify(output)}`);
    } catch (error) {
      if (!(error instanceof WardBlockedError)) throw error;
      steps.push({ type: 'tool-error', toolCallId: call.toolCallId, toolName: call.toolName, error });
      console.log(`${call.toolName}: ${error.verdict} (${error.reasonCodes.join(', ')}) trace ${error.traceId}`);
    }
  }
  return steps;
}

const steps = await runTools(modelToolCalls);
console.log(`tool results: ${steps.filter((s) => s.type === 'tool-result').length}, tool errors: ${steps.filter((s) => s.type === 'tool-error').length}`);
console.log(`notes.txt still exists: ${stillExists(workspace, 'notes.txt')}`);
console.log(`signed traces: ${ward.traceDir}`);
