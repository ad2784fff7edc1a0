/**
 * The control plane (docs/kill-switch.md "In a cluster"): what an operator sets once and every
 * replica enforces. Each table belongs to one topic; a statement-level trigger bumps that topic's
 * version in `ward_control_versions` and sends `NOTIFY ward_control, '<topic>:<version>'` in the
 * same transaction, so a change made by any writer (the CLI, a replica's API, or hand-written SQL)
 * is announced exactly when it commits. Replicas LISTEN for the announcement and also poll the
 * versions, so a lost notification costs at most one poll interval.
 *
 * Rows are stored as the text the writers validated (a kill-switch entry is one entry of
 * `gait.gate.kill_switch_state`); replicas parse them again with the same strict parsers and fail
 * closed on anything they cannot read.
 */
export const CONTROL_SCHEMA = `
CREATE TABLE ward_control_versions (
  topic text PRIMARY KEY CHECK (topic IN ('kill_switch', 'jobs', 'policy', 'pins')),
  version bigint NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO ward_control_versions (topic) VALUES ('kill_switch'), ('jobs'), ('policy'), ('pins');

CREATE FUNCTION ward_control_bump() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v bigint;
  marker text := 'ward_control.bumped_' || TG_ARGV[0];
BEGIN
  -- One bump per topic and transaction (INSERT ... ON CONFLICT fires the INSERT and UPDATE triggers).
  IF current_setting(marker, true) = txid_current()::text THEN
    RETURN NULL;
  END IF;
  PERFORM set_config(marker, txid_current()::text, true);
  UPDATE ward_control_versions SET version = version + 1, updated_at = now() WHERE topic = TG_ARGV[0] RETURNING version INTO v;
  PERFORM pg_notify('ward_control', TG_ARGV[0] || ':' || v);
  RETURN NULL;
END
$$;

-- One kill-switch entry per row: entry_json is the entry object of gait.gate.kill_switch_state.
CREATE TABLE ward_kill_switch_entries (
  id text PRIMARY KEY CHECK (id <> ''),
  entry_json text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  updated_by text NOT NULL DEFAULT ''
);

-- Cluster-wide job controls for the decision service's emergency_stop step.
CREATE TABLE ward_job_controls (
  job_id text PRIMARY KEY CHECK (job_id <> ''),
  status text NOT NULL CHECK (status IN ('emergency_stopped', 'running')),
  reason text NOT NULL DEFAULT '',
  updated_at timestamptz NOT NULL DEFAULT now(),
  updated_by text NOT NULL DEFAULT ''
);

-- Published policies; at most one is active. signature: base64 Ed25519 over
-- 'ward.policy.publication/v1\\n' || digest, by the key whose key_id is given.
CREATE TABLE ward_policy_publications (
  seq bigserial PRIMARY KEY,
  digest text NOT NULL,
  policy_yaml text NOT NULL,
  signature text NOT NULL,
  key_id text NOT NULL,
  published_at timestamptz NOT NULL DEFAULT now(),
  published_by text NOT NULL DEFAULT '',
  active boolean NOT NULL DEFAULT false
);
CREATE UNIQUE INDEX ward_policy_publications_one_active ON ward_policy_publications (active) WHERE active;

-- MCP tool pins: one ward.mcp.tool_pins document per server key.
CREATE TABLE ward_mcp_pins (
  server_key text PRIMARY KEY CHECK (server_key <> ''),
  document text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- What each replica enforces, as it last reported it (not a topic: no trigger).
CREATE TABLE ward_control_replicas (
  replica_id text PRIMARY KEY,
  policy_digest text NOT NULL,
  policy_source text NOT NULL,
  versions jsonb NOT NULL,
  started_at timestamptz NOT NULL,
  synced_at timestamptz NOT NULL,
  reported_at timestamptz NOT NULL DEFAULT now()
);

CREATE TRIGGER ward_kill_switch_entries_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ward_kill_switch_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ward_control_bump('kill_switch');
CREATE TRIGGER ward_job_controls_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ward_job_controls
  FOR EACH STATEMENT EXECUTE FUNCTION ward_control_bump('jobs');
CREATE TRIGGER ward_policy_publications_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ward_policy_publications
  FOR EACH STATEMENT EXECUTE FUNCTION ward_control_bump('policy');
CREATE TRIGGER ward_mcp_pins_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ward_mcp_pins
  FOR EACH STATEMENT EXECUTE FUNCTION ward_control_bump('pins');
`;
