import { answersCheck } from './answers.js';
import { callbackAttemptsCheck, callbackRequestUuidCheck, callbackTrackingIdCheck } from './callback-identity.js';
import { callbackDecryptsCheck } from './callback-decrypts.js';
import { callbackHeadersCheck } from './callback-headers.js';
import { callbackRawBodyCheck } from './callback-raw-body.js';
import { cardResponseCheck } from './card-response.js';
import type { AnyCheck } from './check.js';
import { energyFloorCheck } from './energy-floor.js';
import { envelopeCheck } from './envelope.js';
import { errorBodyCheck } from './error-body.js';
import { processedCheck, processedExactCheck } from './processed.js';
import { refusedCheck } from './refused.js';
import { resultCheck } from './result.js';
import { statusCheck } from './status.js';

/** Every check a suite can name, by id: an explicit registry, no discovery. */
export const CHECKS: readonly AnyCheck[] = [
  statusCheck,
  errorBodyCheck,
  envelopeCheck,
  refusedCheck,
  resultCheck,
  energyFloorCheck,
  cardResponseCheck,
  callbackRawBodyCheck,
  callbackHeadersCheck,
  callbackDecryptsCheck,
  callbackRequestUuidCheck,
  callbackTrackingIdCheck,
  callbackAttemptsCheck,
  answersCheck,
  processedCheck,
  processedExactCheck,
];

/** The check registered under `id`. */
export function findCheck(id: string): AnyCheck | undefined {
  return CHECKS.find((check) => check.id === id);
}
