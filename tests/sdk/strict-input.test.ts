import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ERROR_CODES, Ward, WardError, guardTool, parseJsonText } from '../../src/index.js';
import { REPO, tempDir } from '../cli/run.js';

/** The SDK's JSON-text entry points refuse repeated keys with a WardError; future evidence is refused. */
const HIGH_RISK = join(REPO, 'policies', 'baseline-highrisk.yaml');
const READ = readFileSync(join(REPO, 'examples', 'quickstart', 'read-report.json'), 'utf8');
const V7 = readFileSync(join(REPO, 'fixtures', 'envelopes', 'v7-envelope.json'), 'utf8');
const lowRisk = READ.replace('"risk_class": "high"', '"risk_class": "low"');

async function rejection(p: Promise<unknown>): Promise<WardError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(WardError);
    return err as WardError;
  }
  throw new Error('expected a rejection');
}

const traces = (stateDir: string) => (existsSync(join(stateDir, 'traces')) ? readdirSync(join(stateDir, 'traces')) : []);

describe('Ward.evaluate with JSON text', () => {
  it('decides intent text as it decides the parsed object', async () => {
    const ward = new Ward({ policy: HIGH_RISK, stateDir: tempDir() });
    const fromText = await ward.evaluate(READ);
    const fromObject = await ward.evaluate(parseJsonText(READ) as Record<string, never>);
    expect(fromText.verdict).toBe('allow');
    expect(fromText.intentDigest).toBe(fromObject.intentDigest);
  });

  it('rejects intent text with a repeated key (ERR_INTENT_PARSE, the key and path as details); no trace', async () => {
    const stateDir = tempDir();
    const ward = new Ward({ policy: HIGH_RISK, stateDir });
    const err = await rejection(ward.evaluate(READ.replace('"operation": "read"', '"operation": "read", "operation": "delete"')));
    expect(err.code).toBe(ERROR_CODES.INTENT_PARSE);
    expect(err.exitCode).toBe(6);
    expect(err.message).toBe('parse intent json: duplicate key "operation" at $.targets[0]');
    expect(err.details).toEqual({ duplicate_key: 'operation', duplicate_key_path: '$.targets[0].operation' });
    expect(traces(stateDir)).toEqual([]);
  });

  it('guardTool never runs the tool when the described intent text repeats a key', async () => {
    const ward = new Ward({ policy: HIGH_RISK, stateDir: tempDir() });
    const tool = vi.fn(async () => 'ran');
    const guarded = guardTool(ward, tool, () => READ.replace('"args":', '"args": {"path": "/workspace/report.md"},\n  "args":'));
    const err = await rejection(guarded());
    expect(err.message).toBe('parse intent json: duplicate key "args" at $');
    expect(tool).not.toHaveBeenCalled();
  });

  it('rejects context envelope text with a repeated key (ERR_ENVELOPE_INVALID)', async () => {
    const ward = new Ward({ policy: HIGH_RISK, stateDir: tempDir() });
    const envelope = V7.replace('"context_set_digest": ""', '"context_set_digest": "", "context_set_digest": "x"');
    const err = await rejection(ward.evaluate(lowRisk, { contextEnvelope: envelope, evaluationTime: '2026-03-12T12:00:00Z' }));
    expect(err.code).toBe(ERROR_CODES.ENVELOPE_INVALID);
    expect(err.message).toBe('parse context envelope: duplicate key "context_set_digest" at $');
  });
});

describe('Ward.evaluate with a context envelope dated in the future', () => {
  it('rejects with ERR_ENVELOPE_BINDING outside fail-closed risk classes', async () => {
    const ward = new Ward({ policy: HIGH_RISK, stateDir: tempDir() });
    const err = await rejection(ward.evaluate(lowRisk, { contextEnvelope: V7, evaluationTime: '2026-03-12T11:00:00Z' }));
    expect(err.code).toBe(ERROR_CODES.ENVELOPE_BINDING);
    expect(err.message).toMatch(/^context envelope retrieved_at is in the future: record "ctx-a" retrieved_at 2026-03-12T11:59:55Z/);
    expect(err.details).toMatchObject({ envelope_problem: 'retrieved_at_in_future', ref_id: 'ctx-a', clock_skew_seconds: 300 });
  });

  it('blocks with a trace under a fail-closed risk class, and binds fresh evidence normally', async () => {
    const ward = new Ward({ policy: HIGH_RISK, stateDir: tempDir() });
    const future = await ward.evaluate(READ, { contextEnvelope: V7, evaluationTime: '2026-03-12T11:00:00Z' });
    expect(future.verdict).toBe('block');
    expect(future.reasonCodes).toEqual(['fail_closed_intent_invalid']);
    expect(existsSync(future.tracePath)).toBe(true);
    const fresh = await ward.evaluate(lowRisk, { contextEnvelope: V7, evaluationTime: '2026-03-12T12:00:00Z' });
    expect(fresh.verdict).toBe('allow');
  });
});
