import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { findShadowing, scanToolDefinition } from '../../src/witness/index.js';

const require = createRequire(import.meta.url);
const SERVERS: Record<string, string[]> = {
  everything: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js')],
  filesystem: [require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js'), process.cwd()],
};

/** The reference servers' own tool definitions are ordinary documentation: nothing to flag. */
describe('tool-definition scan on real servers', () => {
  it('flags nothing in server-everything and server-filesystem, and finds no shadowing between them', async () => {
    const names: Record<string, string[]> = {};
    const flagged: string[] = [];
    for (const [server, args] of Object.entries(SERVERS)) {
      const client = new Client({ name: 'ward-scan-test', version: '1.0.0' });
      await client.connect(new StdioClientTransport({ command: process.execPath, args, stderr: 'ignore' }));
      try {
        const { tools } = await client.listTools();
        expect(tools.length).toBeGreaterThan(5);
        names[server] = tools.map((t) => t.name);
        for (const t of tools) for (const f of scanToolDefinition(t)) flagged.push(`${server}/${t.name}: ${f.kind} at ${f.path}`);
      } finally {
        await client.close();
      }
    }
    expect(flagged).toEqual([]);
    expect(findShadowing(names)).toEqual([]);
  }, 30_000);
});
