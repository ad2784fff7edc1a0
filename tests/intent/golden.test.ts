import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { jcs, sha256Hex } from '../../src/canon/index.js';
import {
  argsDigest,
  delegationDigest,
  intentDigest,
  intentDigestPayload,
  normalizeIntent,
  targetsDigest,
} from '../../src/intent/index.js';

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../../fixtures/intents/${name}`, import.meta.url), 'utf8'));

// Canonical strings and digests from gate.md §11 (outputs of the reference implementation).
const V1_CANONICAL =
  '{"arg_provenance":[{"arg_path":"$.path","source":"user"}],"args":{"path":"/tmp/approve-valid.txt"},"context":{"identity":"agent.scenario","phase":"apply","risk_class":"high","session_id":"sess-tier11","workspace":"/repo/gait"},"targets":[{"discovery_method":"unknown","endpoint_class":"fs.write","kind":"path","operation":"write","value":"/tmp/approve-valid.txt"}],"tool_name":"tool.write"}';
const V3_CANONICAL =
  '{"arg_provenance":[{"arg_path":"args.path","source":"user"},{"arg_path":"args.payload","source":"tool_output","source_ref":"trace_2"}],"args":{"path":"/tmp/out.txt","payload":{"tags":["alpha","beta"],"x":1}},"context":{"identity":"alice","phase":"apply","risk_class":"high","session_id":"s1","workspace":"/repo/work"},"targets":[{"discovery_method":"unknown","endpoint_class":"net.http","endpoint_domain":"api.internal","kind":"host","value":"api.internal"},{"discovery_method":"unknown","endpoint_class":"fs.write","kind":"path","operation":"write","value":"/tmp/out.txt"}],"tool_name":"tool.write"}';
const V4_CANONICAL =
  '{"args":{},"context":{"identity":"alice","phase":"apply","risk_class":"medium","workspace":"/repo/gait"},"script":{"steps":[{"args":{"path":"/tmp/input.txt"},"targets":[{"discovery_method":"unknown","endpoint_class":"fs.read","kind":"path","operation":"read","value":"/tmp/input.txt"}],"tool_name":"tool.read"},{"args":{"path":"/tmp/output.txt"},"targets":[{"discovery_method":"unknown","endpoint_class":"fs.write","kind":"path","operation":"write","value":"/tmp/output.txt"}],"tool_name":"tool.write"}]},"script_hash":"4a132cd1a51cc226c73b0cbae9528905fbbaa80b7fe06bb632a62d9647001c11","targets":[{"discovery_method":"unknown","endpoint_class":"fs.read","kind":"path","operation":"read","value":"/tmp/input.txt"},{"discovery_method":"unknown","endpoint_class":"fs.write","kind":"path","operation":"write","value":"/tmp/output.txt"}],"tool_name":"script"}';
const V5_CANONICAL =
  '{"arg_provenance":[{"arg_path":"$.path","source":"user"}],"args":{"path":"/tmp/delegated.txt"},"context":{"identity":"agent.worker","phase":"apply","risk_class":"high","session_id":"sess-tier11","workspace":"/repo/gait"},"delegation":{"chain":[{"delegate_identity":"agent.manager","delegator_identity":"agent.lead","expires_at":"0001-01-01T00:00:00Z","issued_at":"0001-01-01T00:00:00Z","scope_class":"write","token_ref":"694428976ab1b10859171a05"},{"delegate_identity":"agent.senior","delegator_identity":"agent.manager","expires_at":"0001-01-01T00:00:00Z","issued_at":"0001-01-01T00:00:00Z","scope_class":"write","token_ref":"7e37847cf7d9320eb0854cc8"},{"delegate_identity":"agent.worker","delegator_identity":"agent.senior","expires_at":"0001-01-01T00:00:00Z","issued_at":"0001-01-01T00:00:00Z","scope_class":"write","token_ref":"8a715283a36e6b05e9287e12"}],"expires_at":"0001-01-01T00:00:00Z","issued_at":"0001-01-01T00:00:00Z","requester_identity":"agent.worker","scope_class":"write","token_refs":["694428976ab1b10859171a05","7e37847cf7d9320eb0854cc8","8a715283a36e6b05e9287e12"]},"targets":[{"discovery_method":"unknown","endpoint_class":"fs.write","kind":"path","operation":"write","value":"/tmp/delegated.txt"}],"tool_name":"tool.write"}';
const V6_CANONICAL =
  '{"arg_provenance":[{"arg_path":"$.b","integrity_digest":"abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789","source":"external"}],"args":{"a":{"k":"v"},"b":["x",1.5,true,null],"n":12345678901234567000},"context":{"agent_id":"agent-1","agent_identity":{"approved_at":"0001-01-01T00:00:00Z","expires_at":"0001-01-01T00:00:00Z","issued_at":"2026-01-01T00:00:00Z","lifecycle_states":["a","b"],"owner":"team","source":"registry"},"auth_context":{"context_age_seconds":5,"tenant":"t1"},"context_evidence_mode":"required","context_refs":["r1","r2"],"context_set_digest":"abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789","credential_scopes":["a","z"],"identity":"alice","phase":"plan","risk_class":"high","sandbox":{"network_mode":"disabled","timeout_seconds":10,"writable_paths":["/tmp/a","/tmp/b"]},"workspace":"C:/repo/work"},"skill_provenance":{"publisher":"Acme","skill_name":"s","source":"github"},"targets":[{"discovery_method":"unknown","endpoint_class":"net.dns","endpoint_domain":"example.org","kind":"host","operation":"lookup","read_only_hint":true,"value":"http://Example.ORG:80/path"},{"destructive":true,"discovery_method":"unknown","endpoint_class":"proc.exec","kind":"other","operation":"exec","value":"sh"},{"destructive":true,"discovery_method":"dynamic_mcp","endpoint_class":"fs.delete","kind":"path","value":"/tmp/x"},{"discovery_method":"unknown","endpoint_class":"net.http","endpoint_domain":"api.example.com","kind":"url","value":"https://API.Example.com:8443/v1?q=1"}],"tool_name":"mcp/files.delete"}';

describe('intent golden vectors (gate.md §11)', () => {
  it('V1: normalizes the approval-token-valid intent byte for byte', () => {
    const intent = normalizeIntent(fixture('v1-approval-valid.json'));
    expect(jcs(intentDigestPayload(intent))).toBe(V1_CANONICAL);
    expect(intentDigest(intent)).toBe('4b53bb79e35105ac9170963ac6f84ed0ed15530c68f06a46fc1233c5ec766913');
    expect(argsDigest(intent)).toBe('3ce5713f41f9b6812880cac570b0f8ce318c7afff371873f241884729e518370');
    expect(targetsDigest(intent.targets)).toBe('3d24e4abb7368323fe2c424332ccb648f4e83cf79bae2cf074085b707a7450ff');
  });

  it('V1: the expired-token variant digests to the reference value', () => {
    const raw = fixture('v1-approval-valid.json');
    raw.args.path = '/tmp/approve-expired.txt';
    raw.targets[0].value = '/tmp/approve-expired.txt';
    expect(intentDigest(normalizeIntent(raw))).toBe('5560b84bd90ae0b84079bd0125a27d74750fb25f55a62a12a6b718eaca3dca51');
  });

  it('V3: whitespace, case, order and duplicates do not change the digest', () => {
    const intent = normalizeIntent(fixture('v3-equivalent-b.json'));
    expect(jcs(intentDigestPayload(intent))).toBe(V3_CANONICAL);
    expect(intentDigest(intent)).toBe('2bae77d908ce5435fba6a8a4417be8718571f5d68bd89c67d548e791cc3771ca');
  });

  it('V4: script intent canonical form, script_hash and digests', () => {
    const intent = normalizeIntent(fixture('v4-script.json'));
    expect(intent.tool_name).toBe('script');
    expect(jcs(intentDigestPayload(intent))).toBe(V4_CANONICAL);
    expect(intent.script_hash).toBe('4a132cd1a51cc226c73b0cbae9528905fbbaa80b7fe06bb632a62d9647001c11');
    expect(intentDigest(intent)).toBe('311e31ce67a6b94a50f2f2e37f1bff8b417730b5da87ec37527848220f2f5d98');
    expect(argsDigest(intent)).toBe('44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
  });

  it('V5: delegated intent keeps chain order and writes zero times', () => {
    const intent = normalizeIntent(fixture('v5-delegated.json'));
    expect(jcs(intentDigestPayload(intent))).toBe(V5_CANONICAL);
    expect(intentDigest(intent)).toBe('cda51856ccf74168753405a3cc724fd936ede09c3cb26a5c8cdb191804058f27');
    expect(delegationDigest(intent.delegation!)).toBe('cacd63947af15d0850bb55ddf8573def88204d13f4bc8290141003635e04dc08');
  });

  it('V6: the normalization torture test', () => {
    const intent = normalizeIntent(fixture('v6-torture.json'));
    expect(jcs(intentDigestPayload(intent))).toBe(V6_CANONICAL);
    expect(intentDigest(intent)).toBe('8c2d4dd91661964bdb4b8ba91e240565a7ad9d27a347bfb1c557730eadf25a77');
    expect(argsDigest(intent)).toBe('1fcc958cca538a319bb3a32672602d475b6ef76c2b155b787d218bd4a287eaf2');
    expect(sha256Hex(V6_CANONICAL)).toBe('8c2d4dd91661964bdb4b8ba91e240565a7ad9d27a347bfb1c557730eadf25a77');
  });
});
