import { isJsonObject, parseJsonText, parseRFC3339, parseStrictJson, type GoTime, type JsonObject, type JsonValue } from '../canon/index.js';
import { parseContextEnvelope, type ContextEnvelope } from '../context/index.js';
import { isWardError } from '../errors.js';
import type { ParsedToken } from '../tokens/index.js';
import { parseJsonBody as parseStrictBody } from '../edge/body.js';
import { badRequest, HttpError } from '../edge/http-error.js';

/** One `POST /v1/gate/eval` request: what `ward gate eval` takes as files and flags, as JSON. */
export interface EvalBody {
  intent: JsonValue;
  contextEnvelope?: ContextEnvelope;
  contextEnvelopeJson?: JsonObject;
  approvalTokens?: ParsedToken[];
  delegationTokens?: ParsedToken[];
  simulate: boolean;
  evaluationTime?: GoTime;
  correlationId?: string;
  explain: boolean;
}

const EVAL_FIELDS = new Set([
  'intent',
  'context_envelope',
  'approval_tokens',
  'delegation_tokens',
  'simulate',
  'evaluation_time',
  'correlation_id',
  'explain',
]);

/**
 * Parse a JSON request body; anything but well-formed JSON is a 400. That includes a key repeated
 * in one object at any depth (`"simulate":false,"simulate":true`): JSON.parse would keep the last
 * one, so the daemon could decide on a body other than the one a proxy or log in front of it read.
 * The error names the key and the path (`duplicate_key`, `duplicate_key_path` in the body).
 */
export function parseJsonBody(bytes: Buffer): JsonValue {
  if (bytes.length === 0) throw badRequest('request body is empty: send a JSON object');
  return parseStrictBody(bytes, 'invalid JSON body: ');
}

/** Refuse members the endpoint does not define: a misspelt option must not be silently ignored. */
export function checkFields(value: JsonValue, allowed: ReadonlySet<string>, where: string): JsonObject {
  if (!isJsonObject(value)) throw badRequest(`${where} must be a JSON object`);
  for (const key of Object.keys(value)) {
    if (!allowed.has(key)) throw badRequest(`${where}: unknown field ${JSON.stringify(key)}`, `allowed fields: ${[...allowed].join(', ')}`);
  }
  return value;
}

export function parseEvalBody(value: JsonValue, where = 'body'): EvalBody {
  const body = checkFields(value, EVAL_FIELDS, where);
  if (!('intent' in body)) throw badRequest(`${where}: intent is required`, 'send {"intent": {...gait.gate.intent_request...}}');
  const out: EvalBody = { intent: body['intent']!, simulate: bool(body, 'simulate', where), explain: bool(body, 'explain', where) };
  const envelope = body['context_envelope'];
  if (envelope !== undefined && envelope !== null) {
    // A string is the envelope file's exact text (duplicate keys and size are checked on it).
    const text = typeof envelope === 'string' ? envelope : isJsonObject(envelope) ? JSON.stringify(envelope) : undefined;
    if (text === undefined) throw badRequest(`${where}: context_envelope must be an object or the envelope JSON text`);
    try {
      out.contextEnvelope = parseContextEnvelope(text);
      const json = typeof envelope === 'string' ? parseJsonText(envelope) : envelope;
      if (isJsonObject(json)) out.contextEnvelopeJson = json;
    } catch (err) {
      if (!isWardError(err)) throw badRequest(`context envelope: ${(err as Error).message}`);
      throw new HttpError(err.details?.['duplicate_key'] !== undefined ? 'duplicate_key' : 'bad_request', err.message, { ...(err.details ? { details: err.details } : {}), ...(err.hint ? { hint: err.hint } : {}) });
    }
  }
  const approvals = tokens(body, 'approval_tokens', where);
  if (approvals) out.approvalTokens = approvals;
  const delegations = tokens(body, 'delegation_tokens', where);
  if (delegations) out.delegationTokens = delegations;
  const time = body['evaluation_time'];
  if (time !== undefined && time !== null) {
    if (typeof time !== 'string') throw badRequest(`${where}: evaluation_time must be an RFC 3339 string`);
    try {
      out.evaluationTime = parseRFC3339(time);
    } catch (err) {
      throw badRequest(`${where}: invalid evaluation_time: ${(err as Error).message}`, 'use RFC 3339, e.g. 2026-03-12T12:00:00Z');
    }
  }
  const cid = body['correlation_id'];
  if (cid !== undefined && cid !== null) {
    if (typeof cid !== 'string' || !/^[\x21-\x7e]{1,128}$/.test(cid)) throw badRequest(`${where}: correlation_id must be 1-128 printable ASCII characters`);
    out.correlationId = cid;
  }
  return out;
}

function bool(body: JsonObject, key: string, where: string): boolean {
  const v = body[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw badRequest(`${where}: ${key} must be true or false`);
  return v;
}

/** Tokens as objects or as their file text; unparsable text is an invalid token, judged like the CLI's token files. */
function tokens(body: JsonObject, key: string, where: string): ParsedToken[] | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw badRequest(`${where}: ${key} must be an array of tokens`);
  if (v.length > 64) throw badRequest(`${where}: ${key}: at most 64 tokens`);
  return v.map((token, i): ParsedToken => {
    const source = `${key}[${i}]`;
    if (typeof token === 'string') {
      try {
        return { source, value: parseStrictJson(token) };
      } catch (err) {
        return { source, error: (err as Error).message };
      }
    }
    if (!isJsonObject(token)) throw badRequest(`${where}: ${source} must be a token object or its JSON text`);
    return { source, value: token };
  });
}
