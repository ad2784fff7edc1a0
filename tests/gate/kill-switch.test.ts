import { describe, expect, it } from 'vitest';
import { formatRFC3339Nano, jcs, type JsonObject } from '../../src/canon/index.js';
import { ERROR_CODES, WardError } from '../../src/errors.js';
import {
  evaluateKillSwitch,
  killSwitchDecisionJson,
  killSwitchStateJson,
  killSwitchUnavailableDecision,
  parseKillSwitchState,
  type KillSwitchState,
} from '../../src/gate/kill-switch.js';
import type { NormalizedIntent } from '../../src/intent/types.js';
import { fixture, makeIntent, makeTarget, t } from '../context/helpers.js';

const NOW = t('2026-03-12T12:00:00Z');

function state(entries: JsonObject[]): KillSwitchState {
  return parseKillSwitchState(JSON.stringify({ schema_id: 'gait.gate.kill_switch_state', schema_version: '1.0.0', entries }));
}

function entry(selectors: JsonObject, id = 'ks-1'): JsonObject {
  return { id, enabled: true, ...selectors };
}

function codesFor(selectors: JsonObject, intent: NormalizedIntent, at = NOW): string[] {
  return evaluateKillSwitch(state([entry(selectors)]), intent, at).reasonCodes;
}

function stateError(text: string): string {
  try {
    parseKillSwitchState(text);
  } catch (err) {
    expect(err).toBeInstanceOf(WardError);
    expect((err as WardError).code).toBe(ERROR_CODES.KILL_SWITCH_INVALID);
    expect((err as WardError).exitCode).toBe(6);
    return (err as WardError).message;
  }
  throw new Error('expected the state to be rejected');
}

const pathIntent = (value: string) => makeIntent({ targets: [makeTarget({ kind: 'path', value })] });

describe('parseKillSwitchState', () => {
  it('normalizes selectors: tool, environment and kind lowercased, prefixes cleaned, deduplicated and sorted', () => {
    const s = parseKillSwitchState(fixture('kill-switch/state.json'));
    expect(s.entries.map((e) => e.id)).toEqual(['ks-agent', 'ks-prod-delete', 'ks-secrets-dir', 'ks-old']);
    const prod = s.entries[1]!;
    expect(prod.tool_name).toBe('mcp/files.delete');
    expect(prod.environment).toBe('prod');
    expect(formatRFC3339Nano(prod.expires_at)).toBe('2026-03-13T09:00:00Z');
    expect(s.entries[2]!.path_prefixes).toEqual(['/srv/secrets', 'C:/secrets']);
    expect(s.entries[3]!.enabled).toBe(false);
  });

  it('round-trips through killSwitchStateJson', () => {
    const s = parseKillSwitchState(fixture('kill-switch/state.json'));
    expect(parseKillSwitchState(JSON.stringify(killSwitchStateJson(s)))).toEqual(s);
  });

  it('accepts a state without schema fields and with no entries', () => {
    expect(parseKillSwitchState('{"entries":[]}').entries).toEqual([]);
  });

  const bad: Array<[string, string, string]> = [
    ['an unknown selector key', fixture('kill-switch/unknown-selector.json'), 'parse kill switch state: json: unknown field "tool"'],
    ['an unknown top-level key', '{"entries":[],"extra":1}', 'parse kill switch state: json: unknown field "extra"'],
    ['a missing entries array', '{"schema_id":"gait.gate.kill_switch_state"}', 'parse kill switch state: entries must be a JSON array'],
    ['entries given null', '{"entries":null}', 'parse kill switch state: entries must be a JSON array'],
    ['an entry without id', '{"entries":[{"enabled":true}]}', 'parse kill switch state: entries[0].id is required'],
    [
      'an entry without enabled',
      '{"entries":[{"id":"a"}]}',
      'parse kill switch state: entries[0].enabled must be true or false',
    ],
    [
      'enabled given a string',
      '{"entries":[{"id":"a","enabled":"true"}]}',
      'parse kill switch state: entries[0].enabled must be true or false',
    ],
    [
      'duplicate ids',
      '{"entries":[{"id":"a","enabled":true},{"id":" a ","enabled":false}]}',
      'parse kill switch state: duplicate entry id "a"',
    ],
    [
      'an unsupported target kind',
      '{"entries":[{"id":"a","enabled":true,"target_kind":"paths"}]}',
      'parse kill switch state: entries[0].target_kind is unsupported: paths',
    ],
    [
      'a selector of the wrong type',
      '{"entries":[{"id":"a","enabled":true,"tool_name":["x"]}]}',
      'parse kill switch state: json: cannot unmarshal array into Go struct field KillSwitchState.entries.tool_name of type string',
    ],
    [
      'a prefix list with a non-string',
      '{"entries":[{"id":"a","enabled":true,"path_prefixes":[1]}]}',
      'parse kill switch state: json: cannot unmarshal number into Go struct field KillSwitchState.entries.path_prefixes of type string',
    ],
    [
      'a bad expiry time',
      '{"entries":[{"id":"a","enabled":true,"expires_at":"tomorrow"}]}',
      'parse kill switch state: entries.expires_at: parsing time "tomorrow" as RFC 3339 failed',
    ],
    [
      'another schema',
      '{"schema_id":"gait.gate.policy","entries":[]}',
      'parse kill switch state: unsupported kill switch state schema_id: gait.gate.policy',
    ],
    [
      'another version',
      '{"schema_version":"2.0.0","entries":[]}',
      'parse kill switch state: unsupported kill switch state schema_version: 2.0.0',
    ],
    ['a JSON array', '[]', 'parse kill switch state: json: cannot unmarshal array into Go value of type KillSwitchState'],
  ];
  it.each(bad)('fails closed on %s', (_name, text, message) => {
    expect(stateError(text)).toBe(message);
  });

  it('rejects malformed JSON', () => {
    expect(stateError('{"entries":[')).toMatch(/^parse kill switch state: /);
  });
});

describe('evaluateKillSwitch: selectors (gate.md §3.1 step 6)', () => {
  it('agent_id', () => {
    expect(codesFor({ agent_id: 'agent-7' }, makeIntent({ context: { agent_id: 'agent-7' } }))).toEqual([
      'kill_switch_active',
      'kill_switch_agent_id_active',
    ]);
    expect(codesFor({ agent_id: 'agent-7' }, makeIntent({ context: { agent_id: 'Agent-7' } }))).toEqual([]);
  });

  it('identity', () => {
    expect(codesFor({ identity: 'alice' }, makeIntent({ context: { identity: 'alice' } }))).toEqual([
      'kill_switch_active',
      'kill_switch_identity_active',
    ]);
    expect(codesFor({ identity: 'alice' }, makeIntent({ context: { identity: 'bob' } }))).toEqual([]);
  });

  it('tool_name, compared lowercased', () => {
    expect(codesFor({ tool_name: 'Tool.Delete' }, makeIntent({ tool_name: 'tool.delete' }))).toEqual([
      'kill_switch_active',
      'kill_switch_tool_name_active',
    ]);
    expect(codesFor({ tool_name: 'tool.delete' }, makeIntent({ tool_name: 'tool.write' }))).toEqual([]);
  });

  it('environment, compared lowercased', () => {
    expect(codesFor({ environment: 'prod' }, makeIntent({ context: { environment: 'Prod' } }))).toEqual([
      'kill_switch_active',
      'kill_switch_environment_active',
    ]);
    expect(codesFor({ environment: 'prod' }, makeIntent({ context: { environment: 'staging' } }))).toEqual([]);
    expect(codesFor({ environment: 'prod' }, makeIntent())).toEqual([]);
  });

  it('target_kind and target_value must hold for one and the same target', () => {
    const intent = makeIntent({
      targets: [makeTarget({ kind: 'host', value: 'api.internal' }), makeTarget({ kind: 'path', value: '/tmp/x' })],
    });
    expect(codesFor({ target_kind: 'host' }, intent)).toEqual(['kill_switch_active', 'kill_switch_target_active']);
    expect(codesFor({ target_value: '/tmp/x' }, intent)).toEqual(['kill_switch_active', 'kill_switch_target_active']);
    expect(codesFor({ target_kind: 'path', target_value: '/tmp/x' }, intent)).toEqual([
      'kill_switch_active',
      'kill_switch_target_active',
    ]);
    expect(codesFor({ target_kind: 'host', target_value: '/tmp/x' }, intent)).toEqual([]);
    expect(codesFor({ target_value: '/TMP/X' }, intent)).toEqual([]);
  });

  it('path_prefixes', () => {
    expect(codesFor({ path_prefixes: ['/srv/secrets'] }, pathIntent('/srv/secrets/key.pem'))).toEqual([
      'kill_switch_active',
      'kill_switch_path_active',
    ]);
    expect(codesFor({ path_prefixes: ['/srv/secrets'] }, pathIntent('/srv/public/x'))).toEqual([]);
  });

  it('path_prefixes compare canonical paths: traversal, /proc/self/root and relative spellings are covered', () => {
    const hit = ['kill_switch_active', 'kill_switch_path_active'];
    expect(codesFor({ path_prefixes: ['/srv/secrets'] }, pathIntent('/srv/public/../secrets/key.pem'))).toEqual(hit);
    expect(codesFor({ path_prefixes: ['/srv/secrets'] }, pathIntent('/proc/self/root/srv/secrets/key.pem'))).toEqual(hit);
    const inWorkspace = (value: string) => {
      const base = pathIntent(value);
      return { ...base, context: { ...base.context, workspace: '/srv/app' } };
    };
    expect(codesFor({ path_prefixes: ['/srv/secrets'] }, inWorkspace('../secrets/key.pem'))).toEqual(hit);
    expect(codesFor({ path_prefixes: ['secrets'] }, inWorkspace('secrets/key.pem'))).toEqual(hit);
    expect(codesFor({ path_prefixes: ['secrets'] }, inWorkspace('/srv/app/secrets/key.pem'))).toEqual(hit);
    expect(codesFor({ path_prefixes: ['/srv/secrets'] }, pathIntent('~/secrets'))).toEqual(hit);
  });

  it('workspace_prefixes', () => {
    expect(codesFor({ workspace_prefixes: ['/repo/gait'] }, makeIntent({ context: { workspace: '/repo/gait/sub' } }))).toEqual([
      'kill_switch_active',
      'kill_switch_workspace_active',
    ]);
    expect(codesFor({ workspace_prefixes: ['/repo/gait'] }, makeIntent({ context: { workspace: '/repo/other' } }))).toEqual([]);
  });

  it('requires every selector an entry sets, and reports one code per selector kind', () => {
    const selectors = { tool_name: 'mcp/files.delete', environment: 'prod' };
    const both = makeIntent({ tool_name: 'mcp/files.delete', context: { environment: 'prod' } });
    const toolOnly = makeIntent({ tool_name: 'mcp/files.delete', context: { environment: 'dev' } });
    expect(codesFor(selectors, both)).toEqual([
      'kill_switch_active',
      'kill_switch_environment_active',
      'kill_switch_tool_name_active',
    ]);
    expect(codesFor(selectors, toolOnly)).toEqual([]);
  });

  it('an entry without selectors is a global stop', () => {
    const s = parseKillSwitchState(fixture('kill-switch/global-stop.json'));
    const result = evaluateKillSwitch(s, makeIntent({ tool_name: 'anything' }), NOW);
    expect(result.reasonCodes).toEqual(['kill_switch_active']);
    expect(result.decision.matched_entry_ids).toEqual(['stop-all']);
  });

  it('collects every matching entry, sorted, and the union of their codes', () => {
    const s = state([
      entry({ identity: 'alice' }, 'z-identity'),
      entry({ tool_name: 'tool.write' }, 'a-tool'),
      entry({ tool_name: 'tool.other' }, 'm-miss'),
    ]);
    const result = evaluateKillSwitch(s, makeIntent({ tool_name: 'tool.write', context: { identity: 'alice' } }), NOW);
    expect(result.decision.matched_entry_ids).toEqual(['a-tool', 'z-identity']);
    expect(result.reasonCodes).toEqual(['kill_switch_active', 'kill_switch_identity_active', 'kill_switch_tool_name_active']);
    expect(result.violations).toEqual(['kill_switch_active']);
  });
});

describe('evaluateKillSwitch: enabled and expiry', () => {
  const intent = makeIntent({ context: { identity: 'alice' } });

  it('ignores disabled entries', () => {
    const s = state([{ id: 'off', enabled: false, identity: 'alice' }]);
    expect(evaluateKillSwitch(s, intent, NOW).decision.status).toBe('inactive');
  });

  it('an entry is active only while expires_at is after the evaluation time', () => {
    const s = state([entry({ identity: 'alice', expires_at: '2026-03-12T12:00:00Z' })]);
    expect(evaluateKillSwitch(s, intent, t('2026-03-12T11:59:59.999999999Z')).decision.status).toBe('active');
    expect(evaluateKillSwitch(s, intent, NOW).decision.status).toBe('inactive');
    expect(evaluateKillSwitch(s, intent, t('2026-03-12T13:00:00+02:00')).decision.status).toBe('active');
  });

  it('an entry without expires_at never expires', () => {
    const s = state([entry({ identity: 'alice' })]);
    expect(evaluateKillSwitch(s, intent, t('2999-01-01T00:00:00Z')).decision.status).toBe('active');
  });

  it('uses the fixture state as documented', () => {
    const s = parseKillSwitchState(fixture('kill-switch/state.json'));
    const del = makeIntent({ tool_name: 'mcp/files.delete', context: { environment: 'prod', identity: 'alice' } });
    expect(evaluateKillSwitch(s, del, NOW).decision.matched_entry_ids).toEqual(['ks-prod-delete']);
    expect(evaluateKillSwitch(s, del, t('2026-03-13T09:00:00Z')).decision.status).toBe('inactive');
  });
});

describe('evaluateKillSwitch: prefix semantics', () => {
  const cases: Array<[string, string, boolean]> = [
    ['/a/b', '/a/b', true],
    ['/a/b', '/a/b/c', true],
    ['/a/b', '/a/bc', false],
    ['/a/b', '/a', false],
    ['/a/b/', '/a/b/c', true],
    ['/a/b/', '/a/bc', false],
    ['/', '/anything/at/all', true],
    ['/a/b', '/a/x/../b/c', true],
    ['/a/b', '/a/b/../../etc/passwd', false],
    ['/a/b', '/a//b///c', true],
    ['/a/./b/../b', '/a/b/c', true],
    ['C:\\secrets', 'C:\\secrets\\key', true],
  ];
  it.each(cases)('path prefix %s vs target %s -> %s', (prefix, value, expected) => {
    expect(codesFor({ path_prefixes: [prefix] }, pathIntent(value)).length > 0).toBe(expected);
  });

  it('path prefixes look only at path targets', () => {
    const intent = makeIntent({ targets: [makeTarget({ kind: 'url', value: '/a/b/c' })] });
    expect(codesFor({ path_prefixes: ['/a/b'] }, intent)).toEqual([]);
  });

  it('workspace prefixes use the same boundary rule on cleaned workspaces', () => {
    const ws = (workspace: string) => makeIntent({ context: { workspace } });
    expect(codesFor({ workspace_prefixes: ['/repo/gait'] }, ws('/repo/gait'))).not.toEqual([]);
    expect(codesFor({ workspace_prefixes: ['/repo/gait'] }, ws('/repo/gaitx'))).toEqual([]);
    expect(codesFor({ workspace_prefixes: ['/repo/gait'] }, ws('/repo/gait/../other'))).toEqual([]);
    expect(codesFor({ workspace_prefixes: ['C:\\repo'] }, ws('C:/repo/work'))).not.toEqual([]);
  });
});

describe('evaluateKillSwitch: script intents', () => {
  const script = makeIntent({
    tool_name: 'script',
    targets: [],
    script: {
      steps: [
        { tool_name: 'tool.read', args: {}, targets: [makeTarget({ kind: 'path', value: '/tmp/in' })], arg_provenance: [] },
        { tool_name: 'tool.delete', args: {}, targets: [makeTarget({ kind: 'path', value: '/srv/secrets/k' })], arg_provenance: [] },
      ],
    },
  });

  it('matches a tool name used by any step', () => {
    expect(codesFor({ tool_name: 'tool.delete' }, script)).toEqual(['kill_switch_active', 'kill_switch_tool_name_active']);
    expect(codesFor({ tool_name: 'script' }, script)).toEqual(['kill_switch_active', 'kill_switch_tool_name_active']);
  });

  it('looks up targets and paths across script steps', () => {
    expect(codesFor({ target_value: '/tmp/in' }, script)).toEqual(['kill_switch_active', 'kill_switch_target_active']);
    expect(codesFor({ path_prefixes: ['/srv/secrets'] }, script)).toEqual(['kill_switch_active', 'kill_switch_path_active']);
  });
});

describe('kill-switch decisions and their trace JSON (gate.md §6.1)', () => {
  it('an active decision carries every field', () => {
    const s = state([entry({ identity: 'alice' }, 'ks-a')]);
    const { decision } = evaluateKillSwitch(s, makeIntent({ context: { identity: 'alice' } }), t('2026-03-12T13:00:00.5+01:00'));
    expect(jcs(killSwitchDecisionJson(decision))).toBe(
      '{"evaluated_at":"2026-03-12T12:00:00.5Z","matched_entry_ids":["ks-a"],"reason_code":"kill_switch_active","reason_codes":["kill_switch_active","kill_switch_identity_active"],"status":"active"}',
    );
    expect(Object.isFrozen(decision)).toBe(true);
  });

  it('an inactive decision has only status and evaluated_at', () => {
    const result = evaluateKillSwitch(state([]), makeIntent(), NOW);
    expect(result.reasonCodes).toEqual([]);
    expect(result.violations).toEqual([]);
    expect(killSwitchDecisionJson(result.decision)).toEqual({ status: 'inactive', evaluated_at: '2026-03-12T12:00:00Z' });
  });

  it('the unavailable decision blocks with kill_switch_state_unavailable', () => {
    const decision = killSwitchUnavailableDecision(NOW);
    expect(killSwitchDecisionJson(decision)).toEqual({
      status: 'unavailable',
      reason_code: 'kill_switch_state_unavailable',
      reason_codes: ['kill_switch_state_unavailable'],
      evaluated_at: '2026-03-12T12:00:00Z',
    });
  });
});
