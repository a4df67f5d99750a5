import { answersCheck } from './answers.js';
import { answerEdgeCheck, sameVerdictCheck } from './block-edge.js';
import {
  callbackAttemptsCheck,
  callbackRequestUuidCheck,
  callbackSameEventCheck,
  callbackTrackingIdCheck,
} from './callback-identity.js';
import { callbackDecryptsCheck } from './callback-decrypts.js';
import { callbackHeadersCheck } from './callback-headers.js';
import { callbackRawBodyCheck } from './callback-raw-body.js';
import { cardResponseCheck } from './card-response.js';
import type { AnyCheck, Check } from './check.js';
import { energyFloorCheck } from './energy-floor.js';
import { envelopeCheck } from './envelope.js';
import { errorBodyCheck } from './error-body.js';
import { processedCheck, processedExactCheck } from './processed.js';
import { refusedCheck } from './refused.js';
import { resultCheck } from './result.js';
import { statusCheck } from './status.js';

/** Every check a suite can name, under its id: an explicit registry, no discovery. */
export const CHECKS_BY_ID = {
  status: statusCheck,
  'error-body': errorBodyCheck,
  envelope: envelopeCheck,
  refused: refusedCheck,
  result: resultCheck,
  'energy-floor': energyFloorCheck,
  'card-response': cardResponseCheck,
  'same-verdict': sameVerdictCheck,
  'answer-edge': answerEdgeCheck,
  'callback-raw-body': callbackRawBodyCheck,
  'callback-headers': callbackHeadersCheck,
  'callback-decrypts': callbackDecryptsCheck,
  'callback-request-uuid': callbackRequestUuidCheck,
  'callback-tracking-id': callbackTrackingIdCheck,
  'callback-same-event': callbackSameEventCheck,
  'callback-attempts': callbackAttemptsCheck,
  answers: answersCheck,
  processed: processedCheck,
  'processed-exact': processedExactCheck,
};

/** The id of a registered check. */
type CheckId = keyof typeof CHECKS_BY_ID;

/** The parameters of the check `Id` (`CheckParamsOf<'status'>` is `{ equals: number }`). */
type CheckParamsOf<Id extends CheckId> = (typeof CHECKS_BY_ID)[Id] extends Check<infer P> ? P : never;

/**
 * An expectation typed by its check, for suites built in code: `{ check: 'status', equal: 200 }`
 * does not compile. (Suite files are checked by the loader against the same schemas.)
 */
export type TypedExpectation = {
  [Id in CheckId]: { check: Id; rules?: string[]; title?: string } & CheckParamsOf<Id>;
}[CheckId];

/** Every check, in the registry's order (the order of the docs and of suite.schema.json). */
export const CHECKS: readonly AnyCheck[] = Object.values(CHECKS_BY_ID);

/** The check registered under `id`. */
export function findCheck(id: string): AnyCheck | undefined {
  return CHECKS.find((check) => check.id === id);
}
