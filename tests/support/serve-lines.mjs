// The stdio loop of the tests' stub MCP servers: every newline-delimited JSON-RPC line of
// stdin goes to `handle`; the server exits when stdin closes.
export function serveLines(handle) {
  let buf = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    buf += chunk;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i).replace(/\r$/, '');
      buf = buf.slice(i + 1);
      if (line) handle(line);
    }
  });
  process.stdin.on('end', () => process.exit(0));
}
