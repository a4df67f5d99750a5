import { createScrubber, type Scrubber, type Secret } from '../secrets/scrub.js';

/**
 * The secrets this process learnt and the scrubber built from them: every console line, report and
 * error message the CLI writes passes through `scrubOutput`. Apart from secrets.ts (which resolves
 * secrets) so that main.ts can scrub an error line without importing the config file's reader.
 */

const guarded: Secret[] = [];
let scrubber: Scrubber | undefined;

/** Registers a secret: from now on no report or console line of this process shows it. */
export function protect(secret: Secret): void {
  if (secret.value.length === 0 || guarded.some((known) => known.kind === secret.kind && known.value === secret.value))
    return;
  guarded.push(secret);
  scrubber = undefined;
}

function current(): Scrubber {
  scrubber ??= createScrubber(guarded);
  return scrubber;
}

/** Console or report text with every registered secret (and any private key, URL password, token) replaced. */
export function scrubOutput(text: string): string {
  return current().text(text);
}

/** A report (or any plain data) with every string scrubbed. */
export function scrubData<T>(data: T): T {
  return current().value(data);
}
