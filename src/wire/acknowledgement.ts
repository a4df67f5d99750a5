/**
 * What a merchant's answer to a callback delivery means to the service: the one definition of
 * "acknowledged" (CB-ERRCODE) that the runner's checks, the generated properties, the load tool,
 * pre-flight and the emulator's dispatcher all use.
 *
 * CB-ERRCODE: the service counts a delivery successful only when the answer carries `errCode`
 * equal to 0. The interface leaves the rest of the answer open (U-CB-RESPONSE): its HTTP status,
 * its other fields, how 0 is spelled. So there are three readings:
 *
 * - `acknowledged`: HTTP 200, a JSON object whose `errCode` is the JSON number 0 written `0`.
 *   Every reading of the interface counts it.
 * - `not-acknowledged`: no `errCode` (`{"code":0}`, a text body, an empty body, not an object),
 *   `errCode` the string `"0"`, any number but 0, no answer at all. No reading counts it.
 * - `ambiguous`: `errCode` is the number 0 but the answer is not the plain form: another HTTP
 *   status than 200, or 0 spelled `0.0`, `-0`, `0e0`. The rule says "errCode equal to 0", so a
 *   service may count it; a strictly typed service (Go's `int`, a status check first) may not.
 *   A check on it warns under U-CB-RESPONSE, never fails (except under `--strict`).
 */
import { parseExactJson as parseExact, LosslessNumber, type ExactJson } from '../core/exact-json.js';

export type AcknowledgementVerdict = 'acknowledged' | 'not-acknowledged' | 'ambiguous';

export interface Acknowledgement {
  verdict: AcknowledgementVerdict;
  /** One clause a message can quote: why the answer reads as it does. */
  reason: string;
  /** The errCode as written (JSON text), when the answer had one. */
  errCode?: string;
}

/** An answer as far as the service sees it: the HTTP status (0 for none) and the body text. */
export interface CallbackAnswer {
  status: number;
  body: string;
  /** The body already parsed exactly (lossless-json), when the caller has it. */
  json?: ExactJson | undefined;
}

function parsed(answer: CallbackAnswer): ExactJson | undefined {
  if (answer.json !== undefined) return answer.json;
  if (answer.body.trim() === '') return undefined;
  try {
    return parseExact(answer.body);
  } catch {
    return undefined;
  }
}

/** Reads one answer to a callback delivery (CB-ERRCODE; its open edges are U-CB-RESPONSE). */
export function readAcknowledgement(answer: CallbackAnswer | undefined): Acknowledgement {
  if (!answer || answer.status === 0) return { verdict: 'not-acknowledged', reason: 'no answer' };
  const json = parsed(answer);
  if (
    json === undefined ||
    json === null ||
    typeof json !== 'object' ||
    Array.isArray(json) ||
    json instanceof LosslessNumber
  ) {
    return {
      verdict: 'not-acknowledged',
      reason:
        answer.body.trim() === ''
          ? `HTTP ${answer.status} with an empty body (no errCode)`
          : `HTTP ${answer.status} with a body that is not a JSON object (no errCode)`,
    };
  }
  const record = json as Record<string, ExactJson>;
  if (!Object.hasOwn(record, 'errCode'))
    return { verdict: 'not-acknowledged', reason: `HTTP ${answer.status} without errCode` };
  const code = record.errCode;
  const written = code instanceof LosslessNumber ? code.value : JSON.stringify(code);
  if (!(code instanceof LosslessNumber))
    return { verdict: 'not-acknowledged', reason: `errCode ${written} is not a number`, errCode: written };
  if (Number(code.value) !== 0) return { verdict: 'not-acknowledged', reason: `errCode ${written}`, errCode: written };
  if (answer.status !== 200)
    return {
      verdict: 'ambiguous',
      reason: `errCode ${written} with HTTP ${answer.status} (a service that reads the status first counts it as a failure)`,
      errCode: written,
    };
  if (code.value !== '0')
    return {
      verdict: 'ambiguous',
      reason: `errCode written ${written} (a strictly typed service may not read it as 0)`,
      errCode: written,
    };
  return { verdict: 'acknowledged', reason: 'HTTP 200, errCode 0', errCode: written };
}

/** Did every reading of the interface count this answer as an acknowledgement? */
export function isAcknowledged(answer: CallbackAnswer | undefined): boolean {
  return readAcknowledgement(answer).verdict === 'acknowledged';
}
