import { writeFileAtomic } from '../../state/atomic-file.js';
import { mkdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { nowUTC } from '../../canon/index.js';
import { parseContextEnvelope, type ContextEnvelope } from '../../context/index.js';
import { EXIT } from '../../contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import { parseRunRecordInput, recordRunpack, runpackVerified, verifyRunpack } from '../../runpack/index.js';
import { spoolBytes } from '../../store/index.js';
import { stateDir, type CliContext } from '../context.js';
import { readInputText } from '../input.js';
import { correlationId, goJsonLine } from '../output.js';
import { addSigningKeyOptions, signingKeyFromFlags, type SigningKeyFlags } from './keys.js';

interface RecordFlags extends SigningKeyFlags {
  input?: string;
  runId?: string;
  captureMode?: string;
  contextEnvelope?: string;
  contextEvidenceMode?: string;
  unsafeContextRaw?: boolean;
  outDir?: string;
  json?: boolean;
}

/** `ward run record` (packs-regress.md §4). */
export function register(program: Command, ctx: CliContext): void {
  const run = program.command('run').description('capture agent runs as signed, verifiable runpacks');
  addSigningKeyOptions(
    run
      .command('record')
      .description('record run_record.json as a runpack zip (signed with Ward\'s key by default) and verify what was written')
      .argument('[input]', 'run_record.json (same as --input; - reads stdin)'),
  )
    .option('--input <file>', 'run_record.json')
    .option('--run-id <id>', 'override the run id of every record')
    .addOption(new Option('--capture-mode <mode>', 'reference keeps digests only; raw keeps arguments and results').choices(['reference', 'raw']))
    .option('--context-envelope <file>', 'bind a ContextSpec v1 envelope: its records become the run\'s receipts')
    .addOption(new Option('--context-evidence-mode <mode>', 'required makes envelope problems fatal').choices(['best_effort', 'required']))
    .option('--unsafe-context-raw', 'allow receipts whose redaction_mode is raw')
    .option('--out-dir <dir>', 'where runpack_<run_id>.zip is written (default: the state directory)')
    .option('--json', 'one line of JSON on stdout')
    .action(async (positional: string | undefined, flags: RecordFlags) => {
      const inputPath = flags.input ?? positional;
      if (!inputPath) throw new WardError(ERROR_CODES.USAGE, 'missing required --input');
      const input = parseRunRecordInput(await readInputText(ctx, inputPath, 'run record'));
      const warnings: string[] = [];
      const envelope = flags.contextEnvelope ? await loadEnvelope(ctx, flags, warnings) : undefined;
      const key = signingKeyFromFlags(ctx, flags);
      warnings.push(...key.warnings);
      const recorded = recordRunpack(input, {
        runId: flags.runId,
        captureMode: flags.captureMode,
        evidenceMode: flags.contextEvidenceMode,
        envelope,
        unsafeContextRaw: flags.unsafeContextRaw === true,
        signingKey: key.key,
        now: nowUTC(),
        env: platformEnv(),
      });
      warnings.push(...recorded.warnings);

      const dir = resolve(ctx.cwd, flags.outDir ?? stateDir(ctx, flags.stateDir));
      mkdirSync(dir, { recursive: true, mode: 0o750 });
      const path = join(dir, `runpack_${recorded.runId}.zip`);
      writeFileAtomic(path, recorded.bytes);
      // Re-read and verify what is on disk, with the key that signed it.
      const check = verifyRunpack(readFileSync(path), { keys: [key.key], requireSignature: true });
      if (!runpackVerified(check, true)) {
        throw new WardError(ERROR_CODES.RUNPACK_INVALID, 'recorded runpack failed verification', { exitCode: EXIT.VERIFY_FAILED });
      }
      spoolBytes(stateDir(ctx, flags.stateDir), 'runpack', recorded.bytes);

      const bundle = displayPath(ctx.cwd, path);
      const digest = recorded.manifest.manifest_digest;
      const output = {
        ok: true,
        run_id: recorded.runId,
        bundle,
        manifest_digest: digest,
        signature_status: 'signed',
        signature_key_id: key.key.keyId,
        warnings: warnings.length > 0 ? warnings : undefined,
        ticket_footer: `WARD run_id=${recorded.runId} manifest=sha256:${digest} verify="ward verify ${recorded.runId}"`,
      };
      if (flags.json) {
        ctx.stdout(goJsonLine({ ...output, correlation_id: correlationId(ctx.argv) }) + '\n');
      } else {
        for (const [k, v] of Object.entries(output)) {
          if (v === undefined || k === 'ok') continue;
          ctx.stdout(`${k}=${Array.isArray(v) ? v.join('; ') : String(v)}\n`);
        }
      }
      ctx.exitCode = EXIT.OK;
    });
}

/**
 * §4.2 step 4: the envelope must be a local path; a bad envelope is fatal in `required` mode and a
 * warning in `best_effort` mode (then the run is recorded without it).
 */
async function loadEnvelope(ctx: CliContext, flags: RecordFlags, warnings: string[]): Promise<ContextEnvelope | undefined> {
  const path = flags.contextEnvelope!;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path) || (!isAbsolute(path) && path.split(/[\\/]/).includes('..'))) {
    throw new WardError(ERROR_CODES.USAGE, 'context envelope path must be a local filesystem path');
  }
  const required = flags.contextEvidenceMode === 'required';
  try {
    return parseContextEnvelope(await readInputText(ctx, path, 'context envelope'));
  } catch (err) {
    if (required) throw err;
    warnings.push(`context envelope ignored: ${(err as Error).message}`);
    return undefined;
  }
}

/** The reference writes GOOS/GOARCH; Ward writes the same names for the platform it runs on. */
export function platformEnv(): { os: string; arch: string; runtime: string } {
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  const arch = ({ x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm' } as Record<string, string>)[process.arch] ?? process.arch;
  return { os, arch, runtime: 'node' };
}

/** Paths under the working directory are shown relative with `./`, as the reference prints them. */
export function displayPath(cwd: string, path: string): string {
  const rel = relative(cwd, path);
  return rel.startsWith('..') || isAbsolute(rel) ? path : `./${rel}`;
}
