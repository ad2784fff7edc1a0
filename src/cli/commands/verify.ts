import { Option, type Command } from 'commander';
import { EXIT } from '../../contract/exit-codes.js';
import { runpackVerified, verifyRunpack } from '../../runpack/index.js';
import { locateArtifact } from '../../store/index.js';
import { stateDir, type CliContext } from '../context.js';
import { storeOpener, type StoreLocationFlags } from '../store-access.js';
import { addVerifyKeyOptions } from './keys.js';
import { print, requireSignature, shownPath, signatureKeyIds, verifyKeys, type VerifyFlags } from './pack.js';

/** `ward verify <run_id|path>`: verify a runpack (packs-regress.md §1.3). */
export function register(program: Command, ctx: CliContext): void {
  addVerifyKeyOptions(
    program
      .command('verify')
      .description('verify a runpack by path, run id (<state>/runpack_<id>.zip, then the store) or store id: exit 0 ok, 2 failed, 6 usage')
      .argument('<run>', 'runpack path, run id or store id'),
  )
    .addOption(new Option('--profile <profile>', 'strict requires a verified signature and a key source').choices(['standard', 'strict']).default('standard'))
    .option('--require-signature', 'a verified manifest signature is required')
    .option('--json', 'one line of JSON on stdout')
    .option('--store <url>', 'look run and store ids up in a PostgreSQL store (postgres://user@host:5432/db; also WARD_STORE_URL; no password here)')
    .option('--store-password-file <file>', 'file holding the PostgreSQL password (also WARD_STORE_PASSWORD_FILE, PGPASSWORD, ~/.pgpass)')
    .action(async (ref: string, flags: VerifyFlags & StoreLocationFlags) => {
      const require = requireSignature(flags);
      const state = stateDir(ctx, flags.stateDir);
      const openStore = storeOpener(ctx, flags, state);
      const source = await locateArtifact(ref, {
        cwd: ctx.cwd,
        stateDir: state,
        kinds: ['runpack'],
        fileName: (id) => `runpack_${id}.zip`,
        ...(openStore ? { openStore } : {}),
      });
      const keys = verifyKeys(ctx, flags, signatureKeyIds(source.bytes));
      const result = verifyRunpack(source.bytes, { keys, requireSignature: require });
      const ok = runpackVerified(result, require);
      const path = shownPath(ctx, ref, source.path);
      const text = ok
        ? `verify ok: ${result.run_id} (manifest sha256:${result.manifest_digest}, signature ${result.signature_status})`
        : [
            `verify failed: ${result.run_id}`,
            ...(result.missing_files ?? []).map((f) => `missing: ${f}`),
            ...(result.hash_mismatches ?? []).map((m) => `hash mismatch: ${m.path}`),
            ...(result.undeclared_files ?? []).map((f) => `undeclared: ${f}`),
            ...(result.signature_errors ?? []).map((e) => `signature: ${e}`),
            `signature status: ${result.signature_status}`,
          ].join('\n');
      const note = signatureNote(result.signature_status, require);
      const next = nextCommands(result.run_id);
      // The reference's members: no signatures_total/valid when 0, a signature_note, next_commands.
      const { signatures_total, signatures_valid, ...rest } = result;
      const output = {
        ok,
        path,
        ...rest,
        ...(signatures_total > 0 ? { signatures_total } : {}),
        ...(signatures_valid > 0 ? { signatures_valid } : {}),
        signature_note: note,
        next_commands: next,
      };
      print(ctx, flags.json, output, `${text}\nsignature note: ${note}\nnext: ${next.join(' | ')}`);
      ctx.exitCode = ok ? EXIT.OK : EXIT.VERIFY_FAILED;
    });
}

/** The reference's `signature_note` for each status (its wording). */
export function signatureNote(status: string, requireSignature: boolean): string {
  switch (status) {
    case 'missing':
      return requireSignature
        ? 'signatures are required in this mode; provide signing keys and re-run verify'
        : 'unsigned local/dev artifacts are expected by default; use --require-signature for strict verification';
    case 'skipped':
      return requireSignature
        ? 'signature checks were expected but skipped; provide a public key or private key source'
        : 'signature checks were skipped because no verify key was provided';
    case 'verified':
      return 'signatures verified';
    case 'failed':
      return 'signature verification failed; inspect signature_errors and re-run with the correct key';
    default:
      return '';
  }
}

/**
 * What to do with a verified run, as Ward commands (the reference suggests `gait regress bootstrap`
 * and its demos): make it a regression fixture, or wrap it in a pack.
 */
function nextCommands(runId: string): string[] {
  return [`ward regress bootstrap --from ${runId} --json --junit ./junit.xml`, `ward pack build --type run --from ${runId}`];
}
