import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { jcs, parseJsonText, sha256Hex, type JsonValue } from '../../canon/index.js';
import { contextSetDigestPayload, parseContextEnvelope } from '../../context/index.js';
import { EXIT } from '../../contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import type { CliContext } from '../context.js';
import { correlationId, goJsonLine } from '../output.js';

interface DigestOptions {
  contextEnvelope?: string;
  json?: boolean;
}

/**
 * `ward digest <file.json>`: the RFC 8785 canonical form of any JSON document and its digest
 * (lowercase hex sha256 of the canonical bytes), the construction behind every Gait digest.
 * `ward digest --context-envelope <file>`: parse and verify a ContextSpec v1 envelope exactly as the
 * gate does and show the recomputed context_set_digest and the canonical records it covers.
 * Exit 0, or 6 on unreadable or invalid input.
 */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('digest')
    .description('print the canonical JSON (RFC 8785) and sha256 digest of a JSON file, or verify a context envelope')
    .argument('[file]', 'JSON file to canonicalize ("-" for stdin)')
    .option('--context-envelope <file>', 'verify a gait.context.envelope file and print its context_set_digest')
    .option('--json', 'print one JSON object')
    .action(async (file: string | undefined, options: DigestOptions) => {
      if (file !== undefined && options.contextEnvelope !== undefined) {
        throw new WardError(ERROR_CODES.USAGE, 'digest takes either <file> or --context-envelope <file>, not both');
      }
      const source = file ?? options.contextEnvelope;
      if (source === undefined) throw new WardError(ERROR_CODES.USAGE, 'digest requires <file> or --context-envelope <file>');
      const bytes = await readInput(ctx, source);
      const fields = options.contextEnvelope === undefined ? digestJson(bytes) : digestEnvelope(bytes);
      if (options.json) {
        ctx.stdout(goJsonLine({ ok: true, correlation_id: correlationId(ctx.argv), path: source, ...fields }) + '\n');
      } else {
        ctx.stdout(Object.entries(fields).map(([key, value]) => `${key}=${value}`).join('\n') + '\n');
      }
      ctx.exitCode = EXIT.OK;
    });
}

/** Field order here is the text output's line order. */
function digestJson(bytes: Buffer): Record<string, string> {
  const canonical = jcs(parseJsonInput(bytes.toString('utf8')));
  return { digest: sha256Hex(canonical), canonical };
}

function parseJsonInput(text: string): JsonValue {
  try {
    return parseJsonText(text);
  } catch (err) {
    throw new WardError(ERROR_CODES.JCS_INVALID_VALUE, `parse json: ${(err as Error).message}`);
  }
}

function digestEnvelope(bytes: Buffer): Record<string, string | number> {
  const envelope = parseContextEnvelope(bytes);
  return {
    context_set_id: envelope.context_set_id,
    context_set_digest: envelope.context_set_digest,
    evidence_mode: envelope.evidence_mode,
    record_count: envelope.records.length,
    records_canonical: jcs(contextSetDigestPayload(envelope.records)),
  };
}

async function readInput(ctx: CliContext, source: string): Promise<Buffer> {
  if (source === '-') return Buffer.from(await ctx.readStdin(), 'utf8');
  try {
    return readFileSync(resolve(ctx.cwd, source));
  } catch (err) {
    // The reference reports unreadable input files as invalid input (exit 6), not as I/O failures.
    throw new WardError(ERROR_CODES.IO, `read ${source}: ${(err as Error).message}`, { exitCode: EXIT.INVALID_INPUT });
  }
}
