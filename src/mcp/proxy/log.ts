import { createWriteStream, type WriteStream } from 'node:fs';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * Diagnostics: never on stdout (it carries protocol bytes). One readable line to stderr, and one
 * JSON line to `--log-file` when given.
 */
export class ProxyLog {
  private file: WriteStream | undefined;

  constructor(
    private readonly stderr: (text: string) => void,
    logFile?: string,
    private readonly verbose = false,
  ) {
    if (logFile) this.file = createWriteStream(logFile, { flags: 'a', mode: 0o600 });
  }

  log(level: LogLevel, message: string, fields?: Record<string, unknown>): void {
    if (level === 'debug' && !this.verbose) return;
    const extra = fields && Object.keys(fields).length ? ' ' + Object.entries(fields).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ') : '';
    this.stderr(`ward mcp proxy: ${level === 'info' ? '' : `${level}: `}${message}${extra}\n`);
    this.file?.write(JSON.stringify({ time: new Date().toISOString(), level, message, ...fields }) + '\n');
  }

  info(message: string, fields?: Record<string, unknown>): void {
    this.log('info', message, fields);
  }
  warn(message: string, fields?: Record<string, unknown>): void {
    this.log('warn', message, fields);
  }
  error(message: string, fields?: Record<string, unknown>): void {
    this.log('error', message, fields);
  }
  debug(message: string, fields?: Record<string, unknown>): void {
    this.log('debug', message, fields);
  }

  close(): Promise<void> {
    const f = this.file;
    this.file = undefined;
    return f ? new Promise((r) => f.end(() => r())) : Promise.resolve();
  }
}
