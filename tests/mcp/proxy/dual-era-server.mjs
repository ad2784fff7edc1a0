#!/usr/bin/env node
// An MCP server on the official 2.x SDK that serves both protocol eras over stdio (`serveStdio`):
// 2025 revisions through initialize, and 2026-07-28 (server/discover, per-request `_meta`
// envelope, `resultType` on every result) for clients that negotiate it.
//
// Tools:
//   echo {text}                 -> text "echo: <text>" (description from $DUAL_ECHO_DESCRIPTION when set:
//                                  a changed definition for pinning tests)
//   write_file {path, content}  -> writes the file; declares an outputSchema {bytes} and returns
//                                  structuredContent (what a block reply must not violate)
//   delete_note {path}          -> deletes the file
//
// Every tools/call it runs is appended to $DUAL_SERVER_LOG (one JSON line), so a test can prove a
// refused call never reached it; $DUAL_SERVER_PIDS, when set, gets this process's pid at startup.
import { appendFileSync, rmSync, writeFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

if (process.env.DUAL_SERVER_PIDS) appendFileSync(process.env.DUAL_SERVER_PIDS, `${process.pid}\n`);
const seen = (name, args) => {
  if (process.env.DUAL_SERVER_LOG) appendFileSync(process.env.DUAL_SERVER_LOG, JSON.stringify({ name, arguments: args }) + '\n');
};

serveStdio(() => {
  const server = new McpServer({ name: 'dual', version: '1.0.0' });
  const echoDescription = process.env.DUAL_ECHO_DESCRIPTION ?? 'Echo the text back.';
  server.registerTool('echo', { description: echoDescription, inputSchema: z.object({ text: z.string() }) }, async ({ text }) => {
    seen('echo', { text });
    return { content: [{ type: 'text', text: `echo: ${text}` }] };
  });
  server.registerTool(
    'write_file',
    {
      description: 'Write a file.',
      inputSchema: z.object({ path: z.string(), content: z.string() }),
      outputSchema: z.object({ bytes: z.number().int() }),
    },
    async ({ path, content }) => {
      seen('write_file', { path, content });
      writeFileSync(path, content);
      return { content: [{ type: 'text', text: `wrote ${path}` }], structuredContent: { bytes: Buffer.byteLength(content) } };
    },
  );
  server.registerTool('delete_note', { description: 'Delete a note file.', inputSchema: z.object({ path: z.string() }) }, async ({ path }) => {
    seen('delete_note', { path });
    rmSync(path, { force: true });
    return { content: [{ type: 'text', text: `deleted ${path}` }] };
  });
  return server;
});
