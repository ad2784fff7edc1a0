import type { ApprovalTokenFile, WaitForTokenOptions } from '../decision/approval-dir.js';

/**
 * How a person approves a call that needs approval: the command to run (verbatim, from any
 * directory) and a way to wait for the token it writes. Retry the identical call afterwards.
 */
export interface ApprovalRequest {
  intentDigest: string;
  policyDigest: string;
  /** Scopes the token must hold. */
  scope: string[];
  /** `ward approve …`: absolute state directory and token path, the real way to run this Ward. */
  command: string;
  /** Where `command` writes the token (inside `approvalDir`). */
  tokenPath: string;
  /** The directory the next identical call reads tokens from (undefined with `approvalDir: false`). */
  approvalDir: string | undefined;
  /**
   * Resolves when an unused token for this intent and policy appears in the approval directory
   * (rejects on `timeoutMs` or `signal`). The retried call then decides with it.
   */
  waitForToken(options?: WaitForTokenOptions): Promise<ApprovalTokenFile>;
}
