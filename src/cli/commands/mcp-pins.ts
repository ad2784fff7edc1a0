import type { Command } from 'commander';
import { ERROR_CODES, WardError } from '../../errors.js';
import type { PinStore, PinsDocument, ToolPin } from '../../mcp/proxy/pins.js';
import type { CliContext } from '../context.js';
import { openCheckedPool, storeLocationOf } from '../store-access.js';
import { collect } from '../input.js';
import { STATE_DIR_HELP, stateDir } from '../context.js';
import { correlationId, goJsonLine } from '../output.js';

interface PinsFlags {
  stateDir?: string;
  server?: string;
  tool: string[];
  all?: boolean;
  json?: boolean;
  store?: string;
  storePasswordFile?: string;
}


/**
 * `ward mcp pins`: the tool pins `ward mcp proxy --pin-tools` keeps per server
 * (`<state>/mcp-pins/<server key>.json`). A changed tool definition is recorded as pending and its
 * calls are blocked with `mcp_tool_definition_changed` until an operator accepts it here; running
 * proxies pick the accept up on the next call, without a restart.
 */
export function registerPins(mcp: Command, ctx: CliContext): void {
  const pins = mcp
    .command('pins')
    .description('tool pins of ward mcp proxy --pin-tools: list them, accept changed definitions, forget pins');

  pins
    .command('list')
    .description('servers, their tools, pinned and pending definition digests')
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--store <url>', 'the pins of a cluster: PostgreSQL store URL (also WARD_STORE_URL), as given to ward mcp proxy --store')
    .option('--store-password-file <file>', 'file holding the PostgreSQL password (also WARD_STORE_PASSWORD_FILE, PGPASSWORD, ~/.pgpass)')
    .option('--server <key>', 'only this server')
    .option('--json', 'one line of JSON on stdout')
    .action(async (flags: PinsFlags) => {
      const { docs, dir } = await withPins(ctx, flags, (store) => {
        if (!flags.server) return { docs: store.list(), dir: store.dir };
        const doc = store.read(flags.server);
        if (!doc) unknownServer(store, flags.server);
        return { docs: [doc], dir: store.dir };
      });
      const store = { dir };
      if (flags.json) {
        ctx.stdout(goJsonLine({ ok: true, correlation_id: correlationId(ctx.argv), pins_dir: store.dir, servers: docs.map(serverJson) }) + '\n');
        return;
      }
      if (docs.length === 0) {
        ctx.stdout(`no tool pins in ${store.dir} (ward mcp proxy --pin-tools records them)\n`);
        return;
      }
      const lines: string[] = [];
      for (const doc of docs) {
        const names = Object.keys(doc.tools).sort();
        const pending = names.filter((n) => doc.tools[n]!.pending);
        const upstream = Array.isArray(doc.server.upstream) ? doc.server.upstream.join(' ') : doc.server.upstream;
        lines.push(`server ${doc.server_key}  (${doc.server.name}${doc.server.version ? ` ${doc.server.version}` : ''}; ${upstream})`);
        lines.push(`  ${names.length} tool${names.length === 1 ? '' : 's'} pinned, ${pending.length} pending`);
        const width = Math.max(4, ...names.map((n) => n.length));
        for (const name of names) {
          const t = doc.tools[name]!;
          lines.push(`  ${name.padEnd(width)}  pinned ${t.pinned ? t.pinned.slice(0, 12) : '(nothing yet)'}${t.pending ? `  PENDING ${t.pending.slice(0, 12)} (since ${t.pending_at ?? '?'})` : ''}`);
          if (t.pending_reasons?.length) lines.push(`  ${' '.repeat(width)}    SUSPICIOUS: ${t.pending_reasons.join(', ')} (docs/witness.md)`);
          if (t.pending) {
            for (const change of describeChange(t)) lines.push(`  ${' '.repeat(width)}    ${change}`);
          }
        }
        if (pending.length) lines.push(`  accept after review: ward mcp pins accept --server ${doc.server_key} ${pending.map((n) => `--tool ${n}`).join(' ')}`);
      }
      ctx.stdout(lines.join('\n') + '\n');
    });

  pins
    .command('accept')
    .description('accept the pending (changed) definition of tools: calls to them are allowed again, also in running proxies')
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--store <url>', 'the pins of a cluster: PostgreSQL store URL (also WARD_STORE_URL), as given to ward mcp proxy --store')
    .option('--store-password-file <file>', 'file holding the PostgreSQL password (also WARD_STORE_PASSWORD_FILE, PGPASSWORD, ~/.pgpass)')
    .option('--server <key>', 'the server key (ward mcp pins list shows it)')
    .option('--tool <name>', 'a tool whose pending definition to accept (repeatable)', collect, [])
    .option('--all', 'every tool of the server with a pending definition')
    .option('--json', 'one line of JSON on stdout')
    .action(async (flags: PinsFlags) => {
      const key = requireServer(flags, 'accept');
      if (flags.all && flags.tool.length) throw usage('give --tool NAME... or --all, not both', key);
      if (!flags.all && flags.tool.length === 0) throw usage('name the tools to accept: --tool NAME (repeatable) or --all', key);
      const { accepted } = await withPins(ctx, flags, (store, m) => m.acceptPins(store, key, flags.all ? 'all' : flags.tool));
      if (flags.json) {
        ctx.stdout(goJsonLine({ ok: true, correlation_id: correlationId(ctx.argv), server_key: key, accepted }) + '\n');
        return;
      }
      ctx.stdout(accepted.map((a) => `accepted ${a.name}: pinned ${a.digest.slice(0, 12)} (was ${a.previous.slice(0, 12)})`).join('\n') + '\n');
    });

  pins
    .command('forget')
    .description('drop the pins of a server (or of one tool): the next tools/list pins them afresh')
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--store <url>', 'the pins of a cluster: PostgreSQL store URL (also WARD_STORE_URL), as given to ward mcp proxy --store')
    .option('--store-password-file <file>', 'file holding the PostgreSQL password (also WARD_STORE_PASSWORD_FILE, PGPASSWORD, ~/.pgpass)')
    .option('--server <key>', 'the server key (ward mcp pins list shows it)')
    .option('--tool <name>', 'only this tool', collect, [])
    .option('--json', 'one line of JSON on stdout')
    .action(async (flags: PinsFlags) => {
      const key = requireServer(flags, 'forget');
      if (flags.tool.length > 1) throw usage('forget takes at most one --tool', key);
      const { removed } = await withPins(ctx, flags, (store, m) => m.forgetPins(store, key, flags.tool[0]));
      if (flags.json) {
        ctx.stdout(goJsonLine({ ok: true, correlation_id: correlationId(ctx.argv), server_key: key, removed, server_removed: flags.tool.length === 0 }) + '\n');
        return;
      }
      ctx.stdout(flags.tool.length ? `forgot the pin of ${removed[0]} (server ${key})\n` : `forgot every pin of server ${key} (${removed.length} tools)\n`);
    });
}

type PinsModule = typeof import('../../mcp/proxy/pins.js');

/**
 * Run `fn` over the pins: the state directory's files, or with `--store` (or WARD_STORE_URL) the
 * cluster's PostgreSQL, in one transaction whose changes are written back when `fn` returns.
 */
async function withPins<T>(ctx: CliContext, flags: PinsFlags, fn: (store: PinStore, m: PinsModule) => T): Promise<T> {
  const m = await import('../../mcp/proxy/pins.js');
  const location = storeLocationOf(ctx, flags);
  if (location.kind !== 'postgres') return fn(new m.PinStore(m.pinsDir(stateDir(ctx, flags.stateDir))), m);
  const db = await openCheckedPool(location.config, 'ward-cli');
  try {
    const { withStoredPins } = await import('../../mcp/proxy/pins-store.js');
    return await withStoredPins(db, (store) => fn(store, m));
  } finally {
    await db.close();
  }
}

function requireServer(flags: PinsFlags, verb: string): string {
  if (!flags.server) throw usage(`--server is required`, `ward mcp pins list shows the server keys; then ward mcp pins ${verb} --server KEY ...`);
  return flags.server;
}

function usage(message: string, hintOrKey: string): WardError {
  const hint = hintOrKey.startsWith('ward ') ? hintOrKey : `for example: ward mcp pins accept --server ${hintOrKey} --tool NAME`;
  return new WardError(ERROR_CODES.USAGE, message, { hint });
}

function unknownServer(store: { keys(): string[]; dir: string }, key: string): never {
  const known = store.keys();
  throw new WardError(ERROR_CODES.USAGE, `unknown server key ${key}`, {
    hint: known.length ? `known server keys: ${known.join(', ')}` : `no pins in ${store.dir} yet: ward mcp proxy --pin-tools records them (check --state-dir)`,
  });
}

function serverJson(doc: PinsDocument) {
  return {
    server_key: doc.server_key,
    server: doc.server,
    updated_at: doc.updated_at,
    tools: Object.keys(doc.tools)
      .sort()
      .map((name) => {
        const t = doc.tools[name]!;
        return {
          name,
          pinned: t.pinned,
          pinned_at: t.pinned_at,
          definition: t.definition,
          ...(t.pending ? { pending: t.pending, pending_at: t.pending_at, pending_definition: t.pending_definition } : {}),
          ...(t.pending_reasons?.length ? { pending_reasons: t.pending_reasons } : {}),
          ...(t.accepted ? { accepted: t.accepted } : {}),
        };
      }),
  };
}

/** What differs between the pinned and the pending definition, in a line or two each. */
function describeChange(t: ToolPin): string[] {
  const before = t.definition ?? {};
  const after = t.pending_definition ?? {};
  const out: string[] = [];
  for (const field of ['description', 'inputSchema', 'annotations']) {
    const a = JSON.stringify(before[field] ?? null);
    const b = JSON.stringify(after[field] ?? null);
    if (a === b) continue;
    if (field === 'description') {
      out.push(`description was: ${clip(String(before[field] ?? ''))}`);
      out.push(`description now: ${clip(String(after[field] ?? ''))}`);
    } else {
      out.push(`${field} changed`);
    }
  }
  return out;
}

function clip(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > 160 ? `${one.slice(0, 157)}...` : one;
}
