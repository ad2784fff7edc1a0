import type { ServerResponse } from 'node:http';
import { goJsonLine } from '../edge/json-output.js';

/** Send one JSON document in the CLI's `--json` form (sorted keys, Go's HTML-safe escaping). */
export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): number {
  return sendText(res, status, goJsonLine(value) + '\n', 'application/json', headers);
}

export function sendText(res: ServerResponse, status: number, text: string | Buffer, contentType: string, headers: Record<string, string> = {}): number {
  const body = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  res.writeHead(status, { 'content-type': contentType, 'content-length': String(body.length), 'cache-control': 'no-store', ...headers });
  res.end(body);
  return body.length;
}
