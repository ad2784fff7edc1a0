import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { REPO, WARD } from '../cli/run.js';

export const EVERYTHING = join(REPO, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
export const FILESYSTEM = join(REPO, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');

export interface ToolResult {
  content?: { type: string; text?: string }[];
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

export interface Proxied {
  client: Client;
  stderr: () => string;
  close: () => Promise<void>;
}

/** A real SDK 1.x client talking to `server` (node <args>) through `ward mcp proxy <ward…>`. */
export async function throughWard(ward: string[], server: string[], opts: { cwd: string; env?: Record<string, string> }): Promise<Proxied> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [WARD, 'mcp', 'proxy', ...ward, '--', process.execPath, ...server],
    cwd: opts.cwd,
    env: { ...(process.env as Record<string, string>), WARD_STATE_DIR: '', ...opts.env },
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: 'witness-test', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  return { client, stderr: () => err, close: () => client.close() };
}

export const textOf = (r: unknown) =>
  ((r as ToolResult).content ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text ?? '')
    .join('\n');

export const wardOf = (r: unknown) => ((r as ToolResult)._meta?.['ward'] ?? {}) as Record<string, unknown>;

/** Every trace the proxy wrote (after it exited: the journal is drained into files on close). */
export function traces(state: string): Record<string, unknown>[] {
  const dir = join(state, 'traces');
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => n.startsWith('trace_') && n.endsWith('.json')).map((n) => JSON.parse(readFileSync(join(dir, n), 'utf8')) as Record<string, unknown>);
}

/** Every file under `dir` (traces, journal, captures, logs), as text: for "the secret is nowhere" checks. */
export function everyFileText(dir: string): string {
  let out = '';
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    try {
      out += readFileSync(join(dir, name), 'latin1');
    } catch {
      // a directory
    }
  }
  return out;
}
