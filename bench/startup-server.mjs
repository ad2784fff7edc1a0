#!/usr/bin/env node
// The tiny MCP server (fixtures/mcp/tiny-server.mjs), first writing when its process began
// (performance.timeOrigin, epoch ms) to $STARTUP_MARK: the moment the proxy in front of it spawned
// it, for the start-up suite of bench/mcp.bench.js.
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

if (process.env.STARTUP_MARK) writeFileSync(process.env.STARTUP_MARK, String(performance.timeOrigin));
await import('../fixtures/mcp/tiny-server.mjs');
