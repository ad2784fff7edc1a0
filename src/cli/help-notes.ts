import type { Command } from 'commander';

/**
 * What `--help` adds after each command's options: examples, and for commands that are easy to
 * confuse, which one to use when. Kept in one table so every command has an example and the
 * "instead of" notes say the same thing from both sides. Commands that write their own examples
 * (`approve`, `hook <host>`) are not listed.
 */
interface HelpNote {
  examples: readonly string[];
  instead?: string;
}

const VERIFY_CHOICE = `Which verify?
  ward trace verify     signed decision records (trace JSON, a directory of them, JWS or DSSE exports)
  ward verify           a runpack (a recorded run: runpack_<run_id>.zip, a run id or a store id)
  ward pack verify      a pack (PackSpec v1 zip), or a bare runpack
  ward keys verify      the signing key pair in the state directory
  ward delegate verify  one delegation token
  ward mcp verify       not a signature check: an MCP server against the policy's mcp_trust block`;

const SERVE_CHOICE = `Which server?
  ward serve      Ward's governance daemon: gate decisions, traces and packs over HTTP for many agents
                  (POST /v1/gate/eval with an intent); use it when agents call Ward directly
  ward mcp serve  the reference-compatible decision service: tool-call payloads in MCP, OpenAI,
                  Anthropic, Claude Code or LangChain shape (POST /v1/evaluate); use it for
                  integrations written for the reference
  ward mcp proxy  sits between an MCP client and an MCP server and enforces every tools/call`;

export const HELP_NOTES: Readonly<Record<string, HelpNote>> = {
  init: { examples: ['ward init', 'ward init --template baseline-mediumrisk --force', 'ward init --agent claude-code --hook http', 'ward init --agent gemini-cli --dry-run', 'ward init --agent codex', 'ward init --agent copilot --dry-run'] },
  check: { examples: ['ward check', 'ward check --policy policies/baseline-highrisk.yaml --json'] },
  doctor: { examples: ['ward doctor', 'ward doctor --json'] },
  demo: { examples: ['ward demo', 'ward demo --json'] },
  'gate eval': {
    examples: [
      'ward gate eval --policy .ward.yaml --intent intent.json',
      'ward gate eval --policy .ward.yaml --intent intent.json --json --capture-intents',
      'cat intent.json | ward gate eval --policy .ward.yaml --intent - --simulate',
    ],
  },
  'policy validate': { examples: ['ward policy validate .ward.yaml'] },
  'policy fmt': { examples: ['ward policy fmt .ward.yaml', 'ward policy fmt --write .ward.yaml'] },
  'policy test': { examples: ['ward policy test .ward.yaml intent.json'] },
  'policy publish': { examples: ['ward policy publish --store postgres://ward@db:5432/ward --policy .ward.yaml --private-key publisher.key'] },
  'policy published': { examples: ['ward policy published --store postgres://ward@db:5432/ward', 'ward policy published --json'] },
  digest: { examples: ['ward digest intent.json', 'ward digest --context-envelope envelope.json'] },
  'trace verify': { examples: ['ward trace verify .ward/traces', 'ward trace verify trace.jws --jwks jwks.json'], instead: VERIFY_CHOICE },
  'trace export': { examples: ['ward trace export trace.json --format jws --out trace.jws', 'ward trace export trace.json --format dsse --out trace.dsse.json'] },
  'run record': { examples: ['ward run record run_record.json --out-dir evidence'] },
  'pack build': {
    examples: ['ward pack build --type run --from runpack_run_1.zip --out evidence.zip', 'ward pack build --type authorization --from .ward/traces/trace_<trace_id>.json'],
  },
  'pack verify': { examples: ['ward pack verify evidence.zip --require-signature'], instead: VERIFY_CHOICE },
  'pack inspect': { examples: ['ward pack inspect evidence.zip', 'ward pack inspect evidence.zip --json'] },
  'pack upgrade': { examples: ['ward pack upgrade old-evidence.zip --out evidence.zip', 'ward pack upgrade old-evidence.zip --public-key old_public.key --json'] },
  'pack diff': { examples: ['ward pack diff before.zip after.zip', 'ward pack diff before.zip after.zip --output diff.json'] },
  verify: { examples: ['ward verify runpack_run_1.zip', 'ward verify run_1 --require-signature'], instead: VERIFY_CHOICE },
  'store list': { examples: ['ward store list', 'ward store list --verdict block --since 2026-01-01T00:00:00Z --json'] },
  'store show': { examples: ['ward store show <id from ward store list>', 'ward store show <trace_id> --kind trace'] },
  'store ingest': { examples: ['ward store ingest .ward/traces', 'ward store ingest trace_a.json runpack_run_1.zip'] },
  'store gc': { examples: ['ward store gc --max-age 30d', 'ward store gc --max-count 10000 --kind trace'] },
  'store export': { examples: ['ward store export --out evidence-store.zip', 'ward store export --kind trace --verdict block --out blocked.zip'] },
  'store import': { examples: ['ward store import evidence-store.zip'] },
  'store migrate': { examples: ['WARD_STORE_URL=postgres://ward@db:5432/evidence ward store migrate', 'ward store migrate --status --store postgres://ward@db:5432/evidence --json'] },
  'regress init': { examples: ['ward regress init --from runpack_run_1.zip'] },
  'regress add': { examples: ['ward regress add --from run_2 --name second-run'] },
  'regress run': { examples: ['ward regress run', 'ward regress run --junit junit.xml'] },
  'regress bootstrap': { examples: ['ward regress bootstrap --from runpack_run_1.zip --junit junit.xml'] },
  'regress replay': {
    examples: ['ward regress replay --policy candidate.yaml --from .ward/traces', 'ward regress replay --policy candidate.yaml --from store --markdown replay.md'],
  },
  'mcp proxy': {
    examples: [
      'ward mcp proxy --policy .ward.yaml -- node my-mcp-server.js',
      'ward mcp proxy --policy .ward.yaml --listen 127.0.0.1:7470 --upstream-url http://127.0.0.1:8000/mcp',
    ],
    instead: SERVE_CHOICE,
  },
  'mcp serve': { examples: ['ward mcp serve --policy .ward.yaml --listen 127.0.0.1:8787'], instead: SERVE_CHOICE },
  'mcp verify': { examples: ['ward mcp verify --policy .ward.yaml --server server.json'], instead: VERIFY_CHOICE },
  'mcp pins list': { examples: ['ward mcp pins list', 'ward mcp pins list --json'] },
  'mcp pins accept': { examples: ['ward mcp pins accept --server <key> --all', 'ward mcp pins accept --server <key> --tool write_file'] },
  'mcp pins forget': { examples: ['ward mcp pins forget --server <key>', 'ward mcp pins forget --server <key> --tool write_file'] },
  'cluster kill-switch add': { examples: ['ward cluster kill-switch add --store postgres://ward@db:5432/ward --id inc-1234 --tool-name mcp/files.delete --environment prod --reason "INC-1234" --ttl 4h', 'ward cluster kill-switch add --id stop-all --reason "global stop"'] },
  'cluster kill-switch disable': { examples: ['ward cluster kill-switch disable --store postgres://ward@db:5432/ward --id inc-1234'] },
  'cluster kill-switch list': { examples: ['ward cluster kill-switch list --store postgres://ward@db:5432/ward', 'ward cluster kill-switch list --json'] },
  'cluster job stop': { examples: ['ward cluster job stop job-42 --store postgres://ward@db:5432/ward --reason "runaway loop"'] },
  'cluster job resume': { examples: ['ward cluster job resume job-42 --store postgres://ward@db:5432/ward'] },
  'cluster job list': { examples: ['ward cluster job list --store postgres://ward@db:5432/ward --json'] },
  'cluster status': { examples: ['ward cluster status --store postgres://ward@db:5432/ward', 'ward cluster status --json'] },
  serve: { examples: ['ward serve --policy .ward.yaml', 'WARD_TOKEN=secret ward serve --policy .ward.yaml --listen 0.0.0.0:7433 --auth-token-env WARD_TOKEN', 'ward serve --policy .ward.yaml --store postgres://ward@db:5432/ward --state-dir /var/lib/ward/replica-1 --store-pool 10'], instead: SERVE_CHOICE },
  'keys init': { examples: ['ward keys init', 'ward keys init --out-dir keys --prefix prod'] },
  'keys rotate': { examples: ['ward keys rotate'] },
  'keys verify': { examples: ['ward keys verify'], instead: VERIFY_CHOICE },
  'keys list': { examples: ['ward keys list', 'ward keys list --json'] },
  'keys jwks': { examples: ['ward keys jwks', 'ward keys jwks --out jwks.json'] },
  'approve-script': {
    examples: ['ward approve-script --policy .ward.yaml --intent script.json --pattern-id nightly-build --approver alice --ttl 168h --registry approved_scripts.json'],
  },
  'list-scripts': { examples: ['ward list-scripts --registry approved_scripts.json'] },
  'delegate mint': { examples: ['ward delegate mint --delegator alice --delegate build-bot --scope tool:fs.write --ttl 1h'] },
  'delegate verify': { examples: ['ward delegate verify delegation_<token_id>.json --delegate build-bot'], instead: VERIFY_CHOICE },
};

/**
 * Headings for the options of the commands with dozens of flags. An option a table does not name
 * stays under commander's default "Options:" heading, so a new flag is never hidden.
 */
export const OPTION_GROUPS: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = {
  'gate eval': {
    'Input:': ['--policy', '--intent', '--context-envelope', '--evaluation-time', '--profile', '--simulate', '--explain', '--json'],
    'Trace and signing:': ['--trace-out', '--trace-format', '--capture-intents', '--key-mode', '--private-key', '--private-key-env', '--state-dir'],
    'Approvals:': [
      '--approval-token',
      '--approval-token-chain',
      '--approval-token-ref',
      '--approval-token-reuse',
      '--approval-audit-out',
      '--approval-public-key',
      '--approval-public-key-env',
      '--approval-jwks',
      '--approval-private-key',
      '--approval-private-key-env',
    ],
    'Delegation:': [
      '--delegation-token',
      '--delegation-token-chain',
      '--delegation-audit-out',
      '--delegation-public-key',
      '--delegation-public-key-env',
      '--delegation-private-key',
      '--delegation-private-key-env',
    ],
    'Runtime state and enrichment:': [
      '--rate-limit-state',
      '--kill-switch-state',
      '--wrkr-inventory',
      '--approved-script-registry',
      '--approved-script-public-key',
      '--approved-script-public-key-env',
      '--credential-broker',
      '--daemon',
    ],
  },
  'mcp proxy': {
    'Policy and identity:': ['--policy', '--context-envelope', '--identity', '--workspace', '--risk-class', '--arg-source', '--no-witness', '--tool-prefix', '--targets-map', '--state-dir'],
    'Upstream server and listening (proxy mode):': [
      '--upstream-url',
      '--upstream-header',
      '--listen',
      '--listen-path',
      '--auth-token-env',
      '--session-idle-timeout',
      '--max-sessions',
      '--call-timeout',
      '--max-message-bytes',
      '--max-call-bytes',
      '--max-call-keys',
      '--no-decision-thread',
      '--unknown-methods',
      '--unknown-method-risk-class',
    ],
    'Blocks, approvals and tool pins (proxy mode):': [
      '--deny-as',
      '--approval',
      '--approval-dir',
      '--approval-public-key',
      '--approval-public-key-env',
      '--approval-jwks',
      '--approval-inbox',
      '--approval-inbox-token-env',
      '--pin-tools',
      '--store',
      '--store-password-file',
      '--hide-blocked-tools',
    ],
    'Traces and logs:': ['--trace-sink', '--trace-sync', '--capture-intents', '--no-run-capture', '--log-file', '--verbose', '--otel', '--decision-log', '--otel-targets', '--key-mode', '--private-key', '--private-key-env'],
    'One-shot decision (--call, reference mcp proxy):': [
      '--call',
      '--adapter',
      '--profile',
      '--job-root',
      '--kill-switch-state',
      '--trace-out',
      '--run-id',
      '--runpack-out',
      '--pack-out',
      '--export-log-out',
      '--export-otel-out',
      '--json',
    ],
  },
};

/** Attach each note and option grouping to its command (keys are command paths under `ward`, e.g. "gate eval"). */
export function addHelpNotes(program: Command): void {
  const walk = (cmd: Command, path: readonly string[]) => {
    for (const sub of cmd.commands) {
      const subPath = [...path, sub.name()];
      const key = subPath.join(' ');
      const note = HELP_NOTES[key];
      if (note) sub.addHelpText('after', helpNoteText(note));
      const groups = OPTION_GROUPS[key];
      if (groups) {
        for (const [heading, longs] of Object.entries(groups)) {
          for (const option of sub.options) if (option.long && longs.includes(option.long)) option.helpGroup(heading);
        }
      }
      walk(sub, subPath);
    }
  };
  walk(program, []);
}

function helpNoteText(note: HelpNote): string {
  const heading = note.examples.length === 1 ? 'Example:' : 'Examples:';
  const examples = `\n${heading}\n${note.examples.map((e) => `  ${e}`).join('\n')}\n`;
  return note.instead ? `${examples}\n${note.instead}\n` : examples;
}
