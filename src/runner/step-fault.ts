/**
 * Why a step could not give its checks what they judge, and whose fault that is. The fault decides
 * the verdict: the target's is a failure under the rules of the checks it kept from judging (exit 1);
 * the user's setup, the suite's author or the toolkit itself make the run exit 2 with the reason.
 * A check is `skipped` only for a capability the user did not give (`missingNeed` in case-needs.ts),
 * never because a step threw.
 */
import { ConfigError, SpecError } from '../core/errors.js';
import type { Observation } from './checks/check.js';

/**
 * Whose fault a step's failure is. `unsupported`: nobody's; the case needs what this target or its
 * key does not offer (its control API refused a documented request with a 4xx, the key's size leaves
 * no '=' to drop, the case's first order gave no answer to steer the next one by): its checks are
 * `skipped` with the reason, as a missing route is, and count as not judged.
 */
type Blame = 'target' | 'unsupported' | 'setup' | 'suite' | 'toolkit';

/** The blames that make the run exit 2. */
export type RunFault = Exclude<Blame, 'target' | 'unsupported'>;

/** A step's failure: its reason in one line, whose fault it is, and what it took from the checks. */
export interface StepFault {
  blame: Blame;
  message: string;
  /** The one observation the failure took away (the probe's read): checks judging anything else still judge. */
  lost?: Observation;
}

/** An error a step throws on purpose, with its blame (a `deliver.same` naming no event is the suite's). */
export class StepError extends Error {
  constructor(
    readonly blame: Blame,
    message: string,
    readonly lost?: Observation,
  ) {
    super(message);
  }
}

/**
 * The fault of an error a step threw: its own blame when it says one; a configuration error is the
 * user's setup, a suite or spec error the suite's; anything else is the toolkit's (a bug: exit 2 and
 * the message, never a verdict on the target, never `skipped`).
 */
export function faultOf(error: unknown): StepFault {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof StepError) return { blame: error.blame, message, ...(error.lost ? { lost: error.lost } : {}) };
  if (error instanceof ConfigError) return { blame: 'setup', message };
  if (error instanceof SpecError) return { blame: 'suite', message };
  return { blame: 'toolkit', message: `the toolkit could not run the step (a bug; please report it): ${message}` };
}

/** The words a result of a fault that is not the target's opens with: what exit 2 is about. */
export const FAULT_WORDS: Record<RunFault, string> = {
  setup: 'setup error',
  suite: 'suite error',
  toolkit: 'toolkit error',
};
