import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Ward falls back to a per-user state directory ($XDG_STATE_HOME/ward) when no .ward/ is found
// upwards from the working directory. Tests must never share (or litter) the real one: each test
// file gets its own, inherited by the Ward processes it starts.
process.env['XDG_STATE_HOME'] = mkdtempSync(join(tmpdir(), 'ward-xdg-state-'));
