import { resolve } from 'node:path';
import type { Command } from 'commander';
import { addDuration, compareTime, isJsonObject, nowUTC, parseGoDuration, parseJsonText, type JsonObject, type JsonValue } from '../../canon/index.js';
import { EXIT } from '../../contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import { normalizeIntent } from '../../intent/normalize.js';
import { loadPolicyFile } from '../../policy/load.js';
import { writeFileAtomic } from '../../state/atomic-file.js';
import { withFileLock } from '../../state/file-lock.js';
import { TokenInvalidError, approvedScriptRegistryEntries, normalizeApprovedScriptEntry, readApprovedScriptRegistry, signApprovedScriptEntry, verifyApprovedScriptEntry } from '../../tokens/index.js';
import { WARD_VERSION } from '../../version.js';
import type { CliContext } from '../context.js';
import { readInputText } from '../input.js';
import { correlationId, goJsonLine } from '../output.js';
import { mintOrUsage } from './approve.js';
import { addSigningKeyOptions, addVerifyKeyOptions, signingKeyFromFlags, verifyKeysFromFlags, type SigningKeyFlags, type VerifyKeyFlags } from './keys.js';

interface ApproveScriptFlags extends SigningKeyFlags {
  policy: string;
  intent: string;
  patternId: string;
  approver: string;
  ttl: string;
  scope: string;
  registry: string;
  json?: boolean;
}

/**
 * `ward approve-script`: sign a `gait.gate.approved_script_entry` for one script intent under one
 * policy and put it in a registry file; `gate eval --approved-script-registry` then allows that
 * exact script (same policy digest, script hash and tool sequence) without evaluating the policy.
 * `ward list-scripts`: show a registry and whether each entry verifies now.
 */
export function register(program: Command, ctx: CliContext): void {
  addSigningKeyOptions(
    program
      .command('approve-script')
      .description('sign an approved-script registry entry bound to a policy digest and a script hash')
      .requiredOption('--policy <file>', 'the policy the approval is bound to (its digest)')
      .requiredOption('--intent <file>', 'a script intent (context.script.steps) to pre-approve, or - for stdin')
      .requiredOption('--pattern-id <id>', 'a name for this approved pattern (replaces an entry with the same id)')
      .requiredOption('--approver <identity>', 'who approves')
      .requiredOption('--ttl <duration>', 'lifetime as a Go duration, e.g. 168h')
      .requiredOption('--scope <csv>', 'where it applies: * (anywhere the exact script runs), risk:<class>, tool:<name>, workspace_prefix:<path>, endpoint:<class>')
      .requiredOption('--registry <file>', 'registry file to update ({"entries":[...]}; created when missing)'),
  )
    .option('--json', 'one line of JSON on stdout')
    .action(async (flags: ApproveScriptFlags) => {
      const policy = loadPolicyFile(resolve(ctx.cwd, flags.policy));
      const intent = normalizeIntent(parseJsonText(await readInputText(ctx, flags.intent, 'intent')));
      if (!intent.script) {
        throw new WardError(ERROR_CODES.USAGE, 'approve-script needs a script intent (one with script.steps)', {
          hint: 'single tool calls are approved per call with ward approve',
        });
      }
      const signing = signingKeyFromFlags(ctx, flags);
      const now = nowUTC();
      const entry = mintOrUsage(() =>
        signApprovedScriptEntry({
          patternId: flags.patternId,
          policyDigest: policy.digest,
          scriptHash: intent.script_hash,
          toolSequence: intent.script!.steps.map((s) => s.tool_name),
          scope: flags.scope.split(',').map((s) => s.trim()).filter(Boolean),
          approver: flags.approver,
          expiresAt: addDuration(now, parseGoDuration(flags.ttl)),
          now,
          producerVersion: WARD_VERSION,
          key: signing.key,
        }),
      );
      const path = resolve(ctx.cwd, flags.registry);
      const count = withFileLock(`${path}.lock`, { timeoutMs: 3000, staleMs: 15000 }, () => {
        const entries = readEntries(path, ctx.cwd).filter((e) => !isJsonObject(e) || e['pattern_id'] !== entry['pattern_id']);
        entries.push(entry);
        writeFileAtomic(path, JSON.stringify({ entries }, null, 2) + '\n', 0o644);
        return entries.length;
      });
      const signature = entry['signature'] as JsonObject;
      if (flags.json) {
        ctx.stdout(
          goJsonLine({
            ok: true,
            correlation_id: correlationId(ctx.argv),
            registry: path,
            entries: count,
            pattern_id: entry['pattern_id'],
            script_hash: entry['script_hash'],
            policy_digest: entry['policy_digest'],
            expires_at: entry['expires_at'],
            key_id: signature['key_id'],
            warnings: signing.warnings,
          }) + '\n',
        );
      } else {
        for (const warning of signing.warnings) ctx.stderr(`warning: ${warning}\n`);
        ctx.stdout(
          `approved script ${String(entry['pattern_id'])} (${(entry['tool_sequence'] as string[]).join(' → ')}) written to ${path}` +
            ` (${count} entries; expires ${String(entry['expires_at'])}, key ${String(signature['key_id'])})\n`,
        );
      }
      ctx.exitCode = EXIT.OK;
    });

  addVerifyKeyOptions(
    program
      .command('list-scripts')
      .description('list an approved-script registry and check each entry (expiry, signature): exit 0 all valid, 2 otherwise')
      .requiredOption('--registry <file>', 'registry file'),
  )
    .option('--json', 'one line of JSON on stdout')
    .action((flags: VerifyKeyFlags & { registry: string; json?: boolean }) => {
      const entries = readEntries(resolve(ctx.cwd, flags.registry), ctx.cwd);
      const keys = verifyKeysFromFlags(ctx, flags);
      const now = nowUTC();
      const rows = entries.map((value) => {
        let status = 'valid';
        let error = '';
        try {
          verifyApprovedScriptEntry(value, keys, now);
        } catch (err) {
          if (!(err instanceof TokenInvalidError)) throw err;
          status = entryExpired(value, now) ? 'expired' : 'invalid';
          error = err.message;
        }
        const e = isJsonObject(value) ? value : {};
        return {
          pattern_id: e['pattern_id'] ?? '',
          tool_sequence: e['tool_sequence'] ?? [],
          approver_identity: e['approver_identity'] ?? '',
          expires_at: e['expires_at'] ?? '',
          status,
          ...(error ? { error } : {}),
        } as JsonObject;
      });
      const ok = rows.every((r) => r['status'] === 'valid');
      if (flags.json) {
        ctx.stdout(goJsonLine({ ok, correlation_id: correlationId(ctx.argv), registry: flags.registry, entries: rows }) + '\n');
      } else if (rows.length === 0) {
        ctx.stdout(`${flags.registry}: no entries\n`);
      } else {
        for (const r of rows) {
          ctx.stdout(
            `${String(r['status']).padEnd(8)} ${String(r['pattern_id'])}  ${(r['tool_sequence'] as string[]).join(' → ')}  ` +
              `approver=${String(r['approver_identity'])} expires=${String(r['expires_at'])}${r['error'] ? `  (${String(r['error'])})` : ''}\n`,
          );
        }
      }
      ctx.exitCode = ok ? EXIT.OK : EXIT.VERIFY_FAILED;
    });
}

/** A registry's entries; an unreadable or malformed registry is a usage error (exit 6). */
function readEntries(path: string, cwd: string): JsonValue[] {
  try {
    return approvedScriptRegistryEntries(readApprovedScriptRegistry(path, cwd));
  } catch (err) {
    if (err instanceof TokenInvalidError) throw new WardError(ERROR_CODES.USAGE, err.message);
    throw err;
  }
}

function entryExpired(value: JsonValue, now: ReturnType<typeof nowUTC>): boolean {
  try {
    return compareTime(now, normalizeApprovedScriptEntry(value).expires_at) >= 0;
  } catch {
    return false;
  }
}
