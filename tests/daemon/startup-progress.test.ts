import { describe, expect, it } from 'vitest';
import { startDaemon, workdir } from './helpers.js';

describe('ward serve start-up', () => {
  it('logs "starting" (JSON, on stderr) before it listens, so a slow start is never silent', async () => {
    const w = workdir();
    const d = await startDaemon(['--policy', w.policy], { cwd: w.dir });
    try {
      // The log is flushed once per event-loop turn: the listening line may follow stdout's.
      while (!d.stderr().includes('"msg":"listening"')) await new Promise((r) => setTimeout(r, 20));
      const lines = d.stderr().trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      const starting = lines.findIndex((l) => l['msg'] === 'starting');
      const listening = lines.findIndex((l) => l['msg'] === 'listening');
      expect(starting).toBe(0);
      expect(listening).toBeGreaterThan(starting);
      expect(lines[0]).toMatchObject({ level: 'info', policy: w.policy, state_dir: w.state, store: 'local' });
    } finally {
      await d.stop();
    }
  });
});
