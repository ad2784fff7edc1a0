import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { formatRFC3339Nano, isJsonObject, parseJsonText, type GoTime } from '../canon/index.js';
import type { EmergencyStop } from '../decision/steps.js';
import { appendJsonLine } from './jsonl.js';

/**
 * Emergency stop (`mcp-decision-service.md` §6.3 step 5). A call whose `context.job_id` names a
 * job is checked against the job runtime at `--job-root`: `<job-root>/<job_id>/state.json` with a
 * `status`. `emergency_stopped` blocks the call; a job whose state cannot be read (missing, not
 * JSON, no status, an unsafe id) blocks it too. Ward has no job runner of its own: any runner that
 * writes that file can stop the calls of its jobs.
 */
export type { EmergencyStop };

const JOB_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export function checkEmergencyStop(jobRoot: string, jobId: string): EmergencyStop {
  if (!JOB_ID.test(jobId) || jobId.includes('..')) return { status: 'unavailable', detail: 'job_id is not a safe file name' };
  let text: string;
  try {
    text = readFileSync(join(resolve(jobRoot), jobId, 'state.json'), 'utf8');
  } catch (err) {
    return { status: 'unavailable', detail: `read job state: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
  try {
    const state = parseJsonText(text);
    const status = isJsonObject(state) ? state['status'] : undefined;
    if (typeof status !== 'string' || status.trim() === '') return { status: 'unavailable', detail: 'job state has no status' };
    return status.trim().toLowerCase() === 'emergency_stopped' ? { status: 'stopped' } : { status: 'running' };
  } catch (err) {
    return { status: 'unavailable', detail: `parse job state: ${(err as Error).message}` };
  }
}

/** "Blocked dispatch recorded": one line in `<job-root>/<job_id>/events.jsonl`. Best effort. */
export function recordBlockedDispatch(
  jobRoot: string,
  jobId: string,
  event: { at: GoTime; toolName: string; traceId: string; reasonCode: string },
): string | undefined {
  if (!JOB_ID.test(jobId) || jobId.includes('..')) return undefined;
  try {
    appendJsonLine(
      join(resolve(jobRoot), jobId, 'events.jsonl'),
      JSON.stringify({
        type: 'dispatch_blocked',
        created_at: formatRFC3339Nano(event.at),
        job_id: jobId,
        tool_name: event.toolName,
        trace_id: event.traceId,
        reason_code: event.reasonCode,
      }),
    );
    return undefined;
  } catch (err) {
    return `emergency stop: blocked dispatch not recorded: ${(err as Error).message}`;
  }
}
