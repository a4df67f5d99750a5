/**
 * Passive judging of one callback delivery (service→merchant) and the merchant's answer to it.
 * The delivery is judged by the runner's own callback checks (`callback-raw-body`,
 * `callback-headers`, `callback-decrypts`) over a CheckContext built from the observed bytes; the
 * answer by src/wire/acknowledgement.ts, the one definition of an acknowledgement.
 */
import type { ExactJson } from '../core/exact-json.js';
import type { Rule } from '../core/rules.js';
import type { RsaPublicKey } from '../crypto/keys.js';
import {
  callbackDecryptsCheck,
  callbackHeadersCheck,
  callbackRawBodyCheck,
  fail,
  pass,
  preview,
  type Check,
  type CheckContext,
  type Finding,
  type NoParams,
  type ReceivedCallback,
  type ServiceTarget,
  type StrangerKeys,
} from '../runner/api.js';
import { readAcknowledgement, type Acknowledgement } from '../wire/acknowledgement.js';
import { familyOf, reasonInMessage } from '../wire/crypto-failure.js';
import { mediaType } from '../platform/http-io.js';
import type { ObservedExchange } from './exchange.js';
import { bodyBytes, bodyText, evidenceOf, isConfiguredKey, openingKey, openWith, type JudgeKeys } from './observed.js';
import { lazyEvidence, type Evidence, type Judgement } from './tally.js';

const TRUNCATED = 'not judged: the body was longer than the proxy records of one body (it was forwarded whole)';

/** What the stream needs of one delivery. */
export interface DeliveryFacts {
  /** The decrypted payload, when it opened. */
  payload?: Record<string, ExactJson>;
  /** The merchant's answer read as the service reads it. */
  ack: Acknowledgement;
  /** The delivery broke no rule the judge could check (raw Base64, headers, opens to a valid payload). */
  valid: boolean;
  /** Its body holds '+', which a form parser turns into ' ' (CB-RAW-BODY). */
  plus: boolean;
  /** Its key header is the configured API key (undefined: no key configured). */
  ownKey?: boolean;
  /** The merchant refused it with its key check (HTTP 401). */
  keyRefused: boolean;
  evidence: Evidence;
}

function contextFor(
  callback: ReceivedCallback,
  keys: JudgeKeys,
  apiKey: string,
  rules: Map<string, Rule>,
): CheckContext<never> {
  // The runner's callback checks open a delivery with `target.publicKey`: here, the half the profile names for callbacks.
  const opener = (openingKey(keys, 'callback') ?? keys.publicKey) as RsaPublicKey;
  const target: ServiceTarget = {
    side: 'service',
    baseUrl: 'http://observed',
    cardBaseUrl: 'http://observed',
    apiKey,
    publicKey: opener,
    profile: keys.profile,
    allowOrders: false,
  };
  return {
    target,
    suite: { name: 'observe', title: 'observe', side: 'service', cases: [] },
    testCase: { id: 'observed', title: 'observed traffic', rules: [], steps: [] },
    step: {},
    outcome: { exchanges: [], callbacks: [callback], saved: {} },
    params: {} as never,
    rules,
    strangerKeys: { publicKey: opener, privateKey: keys.privateKey } as StrangerKeys,
  };
}

const first = (
  check: Check<NoParams> | Check<{ fields?: Record<string, ExactJson> }>,
  ctx: CheckContext<never>,
): Finding => (check as Check<NoParams>).run(ctx)[0] ?? pass();

/** What judging one delivery shares between its parts. */
interface DeliveryContext {
  observed: ObservedExchange;
  keys: JudgeKeys;
  ctx: CheckContext<never>;
  /** The key header as sent, and whether it is the configured key (undefined: none configured). */
  header: string | undefined;
  ownKey: boolean | undefined;
  truncated: boolean;
  opened: ReturnType<typeof openWith>;
  ack: Acknowledgement;
  /** Records one judgement of the service's delivery. */
  delivery: (check: string, title: string, labels: string[], finding: Finding) => void;
  /** Records one judgement of the merchant's answer. */
  answer: (check: string, title: string, labels: string[], finding: Finding) => void;
}

/** The delivery as the runner's callback checks see one they received. */
function receivedCallback(observed: ObservedExchange, body: Buffer): ReceivedCallback {
  return {
    at: observed.startedAt,
    method: observed.request.method,
    url: observed.request.path,
    headers: observed.request.headers,
    body,
    answeredStatus: observed.response?.status ?? 0,
  };
}

/** The decrypted payload, when the delivery opened to a JSON object. */
function payloadOf(opened: ReturnType<typeof openWith>): Record<string, ExactJson> | undefined {
  return opened !== 'no-key' &&
    'opened' in opened &&
    opened.opened.value !== null &&
    typeof opened.opened.value === 'object' &&
    !Array.isArray(opened.opened.value)
    ? (opened.opened.value as Record<string, ExactJson>)
    : undefined;
}

/** Where the judgements of one delivery go: the service's side (the delivery) and the merchant's (the answer). */
function recorders(
  observed: ObservedExchange,
  evidence: Evidence,
  judgements: Judgement[],
): Pick<DeliveryContext, 'delivery' | 'answer'> {
  return {
    delivery: (check, title, labels, finding) =>
      judgements.push({
        check,
        title: `the service's callback delivery: ${title}`,
        labels,
        side: 'service',
        finding,
        seq: observed.seq,
        evidence,
      }),
    answer: (check, title, labels, finding) =>
      judgements.push({
        check,
        title: `the merchant's answer to a callback: ${title}`,
        labels,
        side: 'merchant',
        finding,
        seq: observed.seq,
        evidence,
      }),
  };
}

/** Judges one callback exchange: the delivery (the service's bytes) and the answer (the merchant's). */
export function judgeCallback(
  observed: ObservedExchange,
  keys: JudgeKeys,
  rules: Map<string, Rule>,
): { judgements: Judgement[]; facts: DeliveryFacts } {
  const judgements: Judgement[] = [];
  const body = bodyBytes(observed.request);
  const text = body.toString('latin1');
  const header = observed.request.headers['x-api-key'];
  const ownKey = isConfiguredKey(keys, header);
  // A body longer than the proxy records is only its first bytes: nothing about it can be judged.
  const truncated = observed.request.truncated === true;
  const opened = truncated ? 'no-key' : openWith(keys, 'callback', text);
  const payload = payloadOf(opened);
  const evidence = lazyEvidence(() =>
    evidenceOf(keys, observed, opened !== 'no-key' && 'opened' in opened ? { request: opened.opened.text } : {}),
  );
  const judging: DeliveryContext = {
    observed,
    keys,
    // Without a configured key, the header is compared with itself: CB-KEY-SAME is skipped, not passed.
    ctx: contextFor(receivedCallback(observed, body), keys, keys.apiKey ?? header ?? '', rules),
    header,
    ownKey,
    truncated,
    opened,
    ack: readAcknowledgement(
      observed.response ? { status: observed.response.status, body: bodyText(observed.response) } : undefined,
    ),
    ...recorders(observed, evidence, judgements),
  };
  const raw = truncated ? { status: 'skipped' as const, message: TRUNCATED } : first(callbackRawBodyCheck, judging.ctx);
  judging.delivery('callback-raw-body', callbackRawBodyCheck.title, callbackRawBodyCheck.rules, raw);
  const headersValid = judgeDeliveryHeaders(judging);
  const decrypts = judgeDecryption(judging, raw);
  judgeAnswer(judging, decrypts.undecryptable);
  const valid = !truncated && raw.status !== 'failed' && headersValid && decrypts.valid;
  const { ack } = judging;
  const keyRefused = observed.response?.status === 401;
  return {
    judgements,
    facts: {
      ...(payload ? { payload } : {}),
      ack,
      valid,
      plus: text.includes('+'),
      ...(ownKey === undefined ? {} : { ownKey }),
      keyRefused,
      evidence,
    },
  };
}

/** The delivery's headers (CB-HEADERS, CB-KEY-SAME, AUTH-KEY); false when they break a rule. */
function judgeDeliveryHeaders({ keys, ctx, observed, header, ownKey, delivery }: DeliveryContext): boolean {
  if (keys.apiKey !== undefined) {
    const headers = first(callbackHeadersCheck, ctx);
    // A capture holds the key's fingerprint: it counts as the key (isConfiguredKey).
    const judged =
      headers.status === 'failed' && ownKey && headers.rules?.includes('CB-KEY-SAME')
        ? pass("both headers, the merchant's own key (by fingerprint)")
        : headers;
    delivery('callback-headers', callbackHeadersCheck.title, callbackHeadersCheck.rules, judged);
    return judged.status !== 'failed';
  }
  const type = mediaType(observed.request.headers['content-type']);
  const finding =
    type !== 'application/x-www-form-urlencoded'
      ? fail(
          `Content-Type is ${JSON.stringify(observed.request.headers['content-type'] ?? null)}, expected application/x-www-form-urlencoded`,
          ['CB-HEADERS'],
        )
      : header === undefined
        ? fail('no X-API-KEY header', ['CB-HEADERS', 'AUTH-KEY'])
        : pass('both headers');
  delivery('callback-headers', 'callback headers (form Content-Type, X-API-KEY present)', ['CB-HEADERS'], finding);
  delivery('callback-key-same', "the callback's X-API-KEY is the merchant's own", ['CB-KEY-SAME'], {
    status: 'skipped',
    message: 'not judged without the API key: give it to the judge to compare the key header with it',
  });
  return finding.status !== 'failed';
}

/** CB-DECRYPT and the payload's schema; `valid` false when it did not open to a valid payload, `undecryptable` the reason it did not open. */
function judgeDecryption(
  { ctx, truncated, opened, ack, delivery }: DeliveryContext,
  raw: Finding,
): { valid: boolean; undecryptable?: string } {
  const record = (finding: Finding) =>
    delivery('callback-decrypts', callbackDecryptsCheck.title, callbackDecryptsCheck.rules, finding);
  if (truncated) return (record({ status: 'skipped', message: TRUNCATED }), { valid: true });
  if (raw.status === 'failed') {
    record({
      status: 'skipped',
      message: `not judged: the body is not raw Base64 (reported once, by callback-raw-body)`,
    });
    return { valid: true };
  }
  if (opened === 'no-key') {
    record({
      status: 'skipped',
      message: 'not judged: the judge holds no key that opens callbacks (give the public key)',
    });
    return { valid: false };
  }
  let undecryptable: string | undefined;
  let finding = first(callbackDecryptsCheck, ctx);
  if (finding.status === 'failed' && finding.cause === 'undecryptable-callback') {
    undecryptable = finding.message;
    // The merchant acknowledged what the judge's key cannot open: the key given to the judge may not be the merchant's.
    if (familyOf(reasonInMessage(finding.message)) === 'key' && ack.verdict === 'acknowledged') {
      finding = {
        status: 'skipped',
        message: `not judged: ${finding.message}; yet the merchant acknowledged it, so either the public key given to the judge is not the merchant's, or the merchant acknowledges what it cannot open (CB-NO-FALSE-ACK)`,
      };
    }
  }
  record(finding);
  // A payload that differs from the toolkit's model only (U-CB-FIELDS) is still a valid delivery.
  const valid = !(
    finding.status === 'skipped' ||
    (finding.status === 'failed' && !(finding.rules ?? []).every((rule) => rule.startsWith('U-')))
  );
  return { valid, ...(undecryptable === undefined ? {} : { undecryptable }) };
}

/** The merchant's answer: there is one, its key check (CB-KEY-401), its errCode (CB-ERRCODE). */
function judgeAnswer(judging: DeliveryContext, undecryptable: string | undefined): void {
  const { observed, answer, header, ownKey } = judging;
  if (observed.response?.truncated) {
    answer('callback-answer', 'errCode (CB-ERRCODE)', ['CB-ERRCODE'], {
      status: 'skipped',
      message: 'not judged: the answer was longer than the proxy records of one body',
    });
    return;
  }
  if (!observed.response) {
    answer(
      'callback-answered',
      'an answer',
      ['CB-AVAILABLE'],
      fail(
        `the merchant did not answer: ${observed.upstreamError?.message ?? 'no answer'} (the proxy answered the service ${observed.upstreamError?.gatewayStatus ?? 502}; the service counts the delivery as failed and retries)`,
        ['CB-AVAILABLE'],
      ),
    );
    return;
  }
  const status = observed.response.status;
  const shown = preview(bodyText(observed.response)) || 'an empty body';
  // CB-KEY-401: a failed key check gets HTTP 401. No key at all can never pass one; another key may be one the judge does not know.
  if (header === undefined)
    answer(
      'callback-key-check',
      'a delivery without X-API-KEY gets HTTP 401',
      ['CB-KEY-401'],
      status === 401 ? pass() : fail(`a delivery without X-API-KEY got HTTP ${status}: ${shown}`, ['CB-KEY-401']),
    );
  else if (ownKey === false)
    answer('callback-key-check', 'a delivery with another X-API-KEY', ['CB-KEY-401'], {
      status: 'skipped',
      message:
        'the delivery carries a key that is not the one given to the judge: whether the merchant holds it is not observable',
    });
  const [title, finding] = errCodeVerdict(judging.ack, status, shown, undecryptable);
  answer('callback-answer', title, ['CB-ERRCODE'], finding);
}

/** The answer's errCode read as the service reads it (src/wire/acknowledgement.ts): the check's title and finding. */
function errCodeVerdict(
  ack: Acknowledgement,
  status: number,
  shown: string,
  undecryptable: string | undefined,
): [string, Finding] {
  const title = 'errCode (CB-ERRCODE)';
  if (ack.verdict === 'acknowledged') {
    const garbage = undecryptable !== undefined && familyOf(reasonInMessage(undecryptable)) === 'plaintext';
    return [
      'errCode (CB-ERRCODE, the one reading of src/wire/acknowledgement.ts)',
      garbage
        ? fail(
            `answered errCode 0 to a delivery whose plaintext is not a JSON payload (${undecryptable}): the event would be lost`,
            ['CB-NO-FALSE-ACK'],
          )
        : pass(ack.reason),
    ];
  }
  if (ack.verdict === 'ambiguous')
    return [
      title,
      fail(`errCode 0 in a form the interface leaves open (U-CB-RESPONSE): ${ack.reason}: ${shown}`, ['U-CB-RESPONSE']),
    ];
  if (status >= 200 && status < 300 && ack.errCode === undefined)
    return [
      title,
      fail(
        `HTTP ${status} without errCode (${ack.reason}): the service counts a delivery successful only by errCode 0, so it reads this as a failure: ${shown}`,
        ['CB-ERRCODE'],
      ),
    ];
  if (status >= 200 && status < 300 && ack.errCode !== undefined && !/^-?\d/.test(ack.errCode))
    return [
      title,
      fail(
        `HTTP ${status} with ${ack.reason}: errCode is a number, and the service reads this as a failure: ${shown}`,
        ['CB-ERRCODE'],
      ),
    ];
  // A refusal (non-zero errCode, an error status): legal when processing failed; the stream judges the retry.
  return [title, pass(`not acknowledged: ${ack.reason}`)];
}
