import { TransportError } from '../core/errors.js';

/** The first 60 characters of a body, JSON-quoted, `…` when there is more: how a message shows an input. */
export function bodyExcerpt(body: string | Uint8Array): string {
  if (typeof body === 'string') return `${JSON.stringify(body.slice(0, 60))}${body.length > 60 ? '…' : ''}`;
  // The first 240 bytes hold the first 60 characters (at most 4 bytes each).
  const text = Buffer.from(body.buffer, body.byteOffset, Math.min(body.length, 240)).toString('utf8');
  return `${JSON.stringify(text.slice(0, 60))}${text.length > 60 || body.length > 240 ? '…' : ''}`;
}

/** Why a run was cut short: the target stopped answering (its failure, judged by the engine), or `--timeout` ran out (the tool's stop). */
type RunStopReason = 'target-gone' | 'run-timeout';

/** A run cut short: every later request fails with it at once, and the engine stops and says so. */
export class RunCutError extends TransportError {
  declare readonly reason: RunStopReason;

  constructor(reason: RunStopReason, message: string) {
    super(reason, message);
  }
}

/**
 * The network state of one run: the origins that answered (a refused connection to one of them
 * means the target stopped answering), the requests in flight, and why the run stopped, if it did.
 */
export class RunSession {
  readonly #answered = new Set<string>();
  /** The last requests sent, oldest first (what a target fell over on, before any case had run); shown only when asked. */
  readonly #sent: Array<{ what: string; body: Uint8Array | undefined }> = [];
  readonly #inFlight = new Set<(error: Error) => void>();
  #stop: RunCutError | undefined;
  #timer: NodeJS.Timeout | undefined;

  /** Why the run was cut, or undefined while it may go on. */
  get stopped(): RunCutError | undefined {
    return this.#stop;
  }

  /** Remembers that an origin answered once. */
  answered(origin: string): void {
    this.#answered.add(origin);
  }

  /** Remembers a request as it is sent (`what`: its method and URL); the last three are kept. */
  sending(what: string, body?: Uint8Array): void {
    this.#sent.push({ what, body });
    if (this.#sent.length > 3) this.#sent.shift();
  }

  /** The last requests sent, oldest first, one line each (`PUT /path with body "…"`). */
  get lastSent(): string[] {
    return this.#sent.map(({ what, body }) =>
      body === undefined || body.length === 0 ? what : `${what} with body ${bodyExcerpt(body)}`,
    );
  }

  /** Forgets that an origin answered: it is about to go away on purpose (a restart the user asked for). */
  forget(origin: string): void {
    this.#answered.delete(origin);
  }

  /** Did this origin answer before in this run? */
  hasAnswered(origin: string): boolean {
    return this.#answered.has(origin);
  }

  /** Cuts the run: requests in flight are aborted with the reason, later ones fail at once. */
  stop(reason: RunStopReason, message: string): RunCutError {
    this.#stop ??= new RunCutError(reason, message);
    for (const abort of [...this.#inFlight]) abort(this.#stop);
    this.#inFlight.clear();
    this.clearDeadline();
    return this.#stop;
  }

  /** Cuts the run after `ms` (`--timeout`); the timer does not keep the process alive. */
  setDeadline(ms: number): void {
    this.clearDeadline();
    this.#timer = setTimeout(() => this.stop('run-timeout', `the run was cut after --timeout ${ms / 1000} s`), ms);
    this.#timer.unref();
  }

  /** Ends the `--timeout` timer (the run finished in time). */
  clearDeadline(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Tracks a request in flight; returns the function that forgets it. */
  track(abort: (error: Error) => void): () => void {
    this.#inFlight.add(abort);
    return () => this.#inFlight.delete(abort);
  }
}
