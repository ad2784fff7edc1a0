import { resolve } from 'node:path';
import type { Command } from 'commander';
import { nowUTC } from '../../canon/index.js';
import { ERROR_CODES } from '../../errors.js';
import { evaluate } from '../../gate/evaluate.js';
import { exitCodeForVerdict } from '../../gate/post-process.js';
import { intentDigest, normalizeIntent } from '../../intent/index.js';
import { loadPolicyFile } from '../../policy/load.js';
import type { CliContext } from '../context.js';
import { parseEvaluationTime, parseJsonInput, readInputText } from '../input.js';
import { correlationId, goJsonLine, omitEmpty } from '../output.js';

/**
 * `ward policy test <policy> <intent>`: the core decision only (no approvals, no rate limits, no
 * trace), for policy authors. Exit 0 allow/dry_run, 3 block, 4 require_approval. As in the
 * reference, `intent_digest` is that of the normalized intent *before* context claims are
 * stripped, so it can differ from `gate eval`'s.
 */
export function register(program: Command, ctx: CliContext): void {
  const policy = program.commands.find((c) => c.name() === 'policy') ?? program.command('policy').description('work with policies');
  policy
    .command('test')
    .description('evaluate an intent against a policy without side effects (exit 0 allow, 3 block, 4 approval)')
    .argument('<policy>', 'policy YAML')
    .argument('<intent>', 'intent JSON, or - for stdin')
    .option('--evaluation-time <rfc3339>', 'evaluation clock (default now)')
    .option('--json', 'one line of JSON')
    .action(async (policyPath: string, intentPath: string, flags: { json?: boolean; evaluationTime?: string }) => {
      const now = parseEvaluationTime(flags.evaluationTime) ?? nowUTC();
      const loaded = loadPolicyFile(resolve(ctx.cwd, policyPath));
      const raw = parseJsonInput(await readInputText(ctx, intentPath, 'intent'), 'parse intent json', ERROR_CODES.INTENT_PARSE);
      const outcome = evaluate(loaded, raw, { now });
      ctx.exitCode = exitCodeForVerdict(outcome.verdict);
      const out = {
        ok: true,
        verdict: outcome.verdict,
        reason_codes: outcome.reasonCodes,
        violations: outcome.violations,
        matched_rule: outcome.matchedRule,
        intent_digest: outcome.intentError ? '' : intentDigest(normalizeIntent(raw)),
        policy_digest: loaded.digest,
      };
      if (flags.json) ctx.stdout(goJsonLine({ ...omitEmpty(out), correlation_id: correlationId(ctx.argv) }) + '\n');
      else {
        ctx.stdout(`verdict: ${out.verdict}\nreasons: ${out.reason_codes.join(', ')}\n`);
        if (out.matched_rule) ctx.stdout(`matched rule: ${out.matched_rule}\n`);
      }
    });
}
