import type { CryptoProfile } from '../core/profile.js';
import type { RsaPrivateKey, RsaPublicKey } from '../crypto/keys.js';
import type { Transport } from './transport.js';

/** How one check ended. `warning`: a SHOULD rule or an assumption (U-*) failed. */
export type Status = 'passed' | 'failed' | 'warning' | 'skipped';

/** What a check found: the outcome plus the evidence a person needs to see why. */
export interface Finding {
  status: Status;
  message: string;
  /**
   * What the failure follows from (e.g. `undecryptable-answer`, `no-answer`): within a step, only the
   * first failure of a cause is reported; later ones are `skipped`, pointing at it.
   */
  cause?: string;
  /** The rules the observation breaks, when the check can name them more precisely than the expectation. */
  rules?: string[];
}

/** An open point of the interface (a U-* rule) that a verdict rests on, with the rule's text. */
interface Assumption {
  rule: string;
  text: string;
}

/** One line of report.json (schemas/report.schema.json): a check of a case of a suite. */
export interface CheckResult {
  id: string;
  suite: string;
  case: string;
  title: string;
  rules: string[];
  status: Status;
  message: string;
  /** How long the step that produced this verdict took. */
  durationMs?: number;
  /** The U-* readings this verdict depends on (from spec/rules.yaml), when any. */
  assumptions?: Assumption[];
  evidence?: Record<string, unknown>;
  /** What the failure follows from (the finding's `cause`, e.g. `no-answer`): failures sharing one are grouped in the reports. */
  cause?: string;
  /** The one command that replays just this case (set by the CLI on results that did not pass; no secret in it). */
  replay?: string;
  /**
   * Set when the check could not be judged through no fault of the target: the user's setup, the
   * suite's author or the toolkit itself. Such a result is `failed` and makes the run exit 2.
   */
  fault?: 'setup' | 'suite' | 'toolkit';
}

/** Counts that agree with the results. */
interface Summary {
  passed: number;
  failed: number;
  warnings: number;
  skipped: number;
  durationMs: number;
  /** Skipped checks of MUST rules: a green run with these is not an all-clear. */
  skippedMust?: number;
}

/** One thing pre-flight did: what it sent, what it saw, what it concludes (`warning`: unproven, the suites judge). */
export interface PreflightStep {
  what: string;
  observed: string;
  conclusion: string;
  level: 'ok' | 'warning';
}

/** Pre-flight's reasoning before the suites (a run it stopped has no report: exit 2, one line). */
export interface Preflight {
  verdict: 'ok' | 'warning';
  steps: PreflightStep[];
}

/** report.json exactly as schemas/report.schema.json fixes it. */
export interface Report {
  target: Record<string, unknown>;
  summary: Summary;
  results: CheckResult[];
  /** What a person must know to read the verdict: why MUST checks were skipped, what was not restored. */
  notes?: string[];
  /** How pre-flight judged the configuration before the suites, step by step. */
  preflight?: Preflight;
  /** How to run one case of this run again: the run's command without secrets, to which `--case ID` is added. */
  replay?: { command: string };
}

/** The service side under test: any base URL speaking the interface. */
export interface ServiceTarget {
  side: 'service';
  baseUrl: string;
  cardBaseUrl: string;
  apiKey: string;
  publicKey: RsaPublicKey;
  profile: CryptoProfile;
  userId?: number;
  forbiddenKey?: string;
  expiredKey?: string;
  /** A key whose validity window has not begun yet (ERR-401). */
  futureKey?: string;
  controlToken?: string;
  /** Order-creating cases run only with this (they move money), or against the emulator. */
  allowOrders: boolean;
  /** Port for a callback receiver (`--listen`), when callbacks are triggered by hand. */
  listenPort?: number;
  /** Address the callback receiver binds (`--listen-host`; default loopback, or every interface with --listen or --public-url). */
  listenHost?: string;
  /** The receiver's URL as the service reaches it (`--public-url`), told to the service instead of the bound address. */
  publicUrl?: string;
  /** Where the API key came from, for messages (`env WALLET_API_KEY`; default `--api-key`). */
  apiKeySource?: string;
  /** Where the control token came from, for messages (default `--control-token`). */
  controlTokenSource?: string;
  /** How the runner reaches it (default: HTTP(S) through src/net); `RunOptions.transport` sets it. */
  transport?: Transport;
}

/** The merchant side under test: a callback endpoint. */
export interface MerchantTarget {
  side: 'merchant';
  callbackUrl: string;
  apiKey: string;
  privateKey: RsaPrivateKey;
  profile: CryptoProfile;
  probeUrl?: string;
  /** Sent to the probe URL as `Authorization: Bearer <token>` (a secret: never in a report). */
  probeToken?: string;
  /** A command that prints the processed payloads as JSON, in place of a probe URL. */
  probeCmd?: string;
  /** A command that takes the receiver down and lets it come back (for redelivery across a restart). */
  restartCmd?: string;
  /** In-process alternative to `restartCmd` (the embedded run and the toolkit's own tests). */
  restartHook?: () => Promise<void>;
  expiredKey?: string;
  /** A key whose validity window has not begun yet (CB-KEY-401). */
  futureKey?: string;
  /** Where the API key came from, for messages (`env WALLET_API_KEY`; default `--api-key`). */
  apiKeySource?: string;
  /** How long (ms) a deliver step waits for processing that finishes after the answer (default 2000). */
  settleMs?: number;
  /** How the runner reaches it (default: HTTP(S) through src/net); `RunOptions.transport` sets it. */
  transport?: Transport;
}

/** Either side. */
export type Target = ServiceTarget | MerchantTarget;

/** A flattened, API-key-free description of the target for reports. */
export function describeTarget(target: Target): Record<string, unknown> {
  if (target.side === 'service') {
    return {
      side: 'service',
      baseUrl: target.baseUrl,
      cardBaseUrl: target.cardBaseUrl,
      userId: target.userId ?? null,
      profile: target.profile,
      control: Boolean(target.controlToken),
      allowOrders: target.allowOrders,
    };
  }
  return {
    side: 'merchant',
    callbackUrl: target.callbackUrl,
    probeUrl: target.probeUrl ?? null,
    probeCmd: Boolean(target.probeCmd),
    restart: Boolean(target.restartCmd ?? target.restartHook),
    profile: target.profile,
  };
}
