/**
 * The runner's public API: what the layers built on the runner (src/property, src/observe) may use:
 * the verdict model, the checks they judge with, the steps they drive, the probe reader and
 * the transport. Anything else in src/runner is its own (lint: import directions, ARCHITECTURE.md).
 */
export { probeCapabilities, type Capabilities } from './capabilities.js';
export { callbackDecryptsCheck } from './checks/callback-decrypts.js';
export { callbackHeadersCheck } from './checks/callback-headers.js';
export { IDENTITY_FIELDS } from './checks/callback-identity.js';
export { callbackRawBodyCheck } from './checks/callback-raw-body.js';
export { cardResponseCheck } from './checks/card-response.js';
export { describeIssues, fail, issueRules, pass, preview, type Check, type NoParams } from './checks/check.js';
export { envelopeCheck } from './checks/envelope.js';
export { errorBodyCheck } from './checks/error-body.js';
export { refusedCheck } from './checks/refused.js';
export { resultCheck } from './checks/result.js';
export { makeStrangerKeys, type StrangerKeys } from './stranger-keys.js';
export { type CheckContext, type Exchange, type ReceivedCallback, type ReceivedResponse } from './observation.js';
export { type RunEvent } from './run-options.js';
export { assumptionsOf, failureStatus, judgeFinding, judgedRules, skipNotes } from './verdict.js';
export { defaultPayload, postCallback } from './merchant-steps.js';
export { probeEntryTexts, readProbeAfter, type ProbeMark } from './probe-reader.js';
export { restoreControlState, snapshotControlState } from './restore.js';
export { runControl, runRequest } from './service-steps.js';
export { type Step } from './model.js';
export { transportOf, type Transport } from './transport.js';
export {
  type CheckResult,
  type Finding,
  type MerchantTarget,
  type Report,
  type ServiceTarget,
  type Status,
  type Target,
} from './types.js';
