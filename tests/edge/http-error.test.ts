import { describe, expect, it } from 'vitest';
import { badRequest, errorResponse, HTTP_ERROR_STATUS, HttpError } from '../../src/edge/http-error.js';
import { ERROR_CODES, WardError } from '../../src/errors.js';

describe('HttpError', () => {
  it('each code has one status', () => {
    for (const [code, status] of Object.entries(HTTP_ERROR_STATUS)) {
      expect(new HttpError(code as keyof typeof HTTP_ERROR_STATUS, 'x').status).toBe(status);
    }
    expect(badRequest('nope').status).toBe(400);
  });

  it('renders the daemon envelope: details first, then ok, error and the CLI error fields', () => {
    const e = errorResponse(new HttpError('duplicate_key', 'dup', { hint: 'h', details: { duplicate_key: 'a', duplicate_key_path: '$' } }));
    expect(e.status).toBe(400);
    expect(e.exitCode).toBe(6);
    expect(e.body).toEqual({ duplicate_key: 'a', duplicate_key_path: '$', ok: false, error: 'dup', error_code: 'invalid_input', error_category: 'invalid_input', retryable: false, hint: 'h' });
    expect(Object.keys(e.body).slice(0, 3)).toEqual(['duplicate_key', 'duplicate_key_path', 'ok']);
  });

  it('5xx and 429 are internal (exit 1, retryable); headers pass through', () => {
    const e = errorResponse(new HttpError('overload', 'busy', { headers: { 'retry-after': '1' } }));
    expect(e).toMatchObject({ status: 429, exitCode: 1, headers: { 'retry-after': '1' }, body: { retryable: true, error_code: 'internal_failure' } });
    expect(errorResponse(new HttpError('draining', 'bye')).exitCode).toBe(1);
  });

  it('WardErrors get the status of their code; anything else is a 500', () => {
    expect(errorResponse(new WardError(ERROR_CODES.STORE_NOT_FOUND, 'gone')).status).toBe(404);
    expect(errorResponse(new WardError(ERROR_CODES.STORE_LOCKED, 'busy')).status).toBe(503);
    expect(errorResponse(new WardError(ERROR_CODES.USAGE, 'bad')).status).toBe(400);
    const e = errorResponse(new Error('boom'));
    expect(e.status).toBe(500);
    expect(e.body).toMatchObject({ ok: false, error: 'boom', error_code: 'internal_failure' });
  });
});
