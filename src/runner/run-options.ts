import type { Rule } from '../core/rules.js';
import type { NetworkConfig } from '../net/network-config.js';
import type { Capabilities } from './capabilities.js';
import type { Suite } from './model.js';
import type { Transport } from './transport.js';
import type { CheckResult, Preflight, Report, Target } from './types.js';

/** What the engine tells reporters while it runs. */
export type RunEvent =
  | { kind: 'start'; total: number; side: Target['side'] }
  | { kind: 'case'; suite: string; testCase: string; title: string }
  | { kind: 'result'; result: CheckResult }
  | { kind: 'prompt'; text: string }
  | { kind: 'done'; report: Report };

/** Everything a run needs. */
export interface RunOptions {
  target: Target;
  suites: Suite[];
  rules: Rule[];
  /** SHOULD rules fail too. */
  strict?: boolean;
  onEvent?: (event: RunEvent) => void;
  /** What the target offers beyond the interface; probed before the run when not given. */
  capabilities?: Capabilities;
  /**
   * How the runner reaches the target (default: HTTP(S) through src/net): a test injects one that
   * answers in-process. The receiver of service callbacks stays a loopback server.
   */
  transport?: Transport;
  /** Pre-flight's reasoning (written into the report as `preflight`). */
  preflight?: Preflight;
  /**
   * TLS, proxies, limits and the session of the run (default: the process's, which the CLI sets
   * with `useNetwork`). Read once: the run's steps, probe reads and requests use it, and what they
   * opened is closed when the run ends.
   */
  network?: NetworkConfig;
}
