/**
 * Passive judging of the merchant→service leg: the order endpoints (energy query, order submission)
 * and card close, request and answer. The answer is judged by the runner's own checks (`envelope`,
 * `result`, `error-body`, `refused`, `card-response`) over a CheckContext built from the observed
 * bytes; the request by the rules that bind the merchant who sent it (the runner sends requests,
 * it never had to judge one).
 */
import { LosslessNumber, type ExactJson } from '../core/exact-json.js';
import { mediaType } from '../platform/http-io.js';
import { DEFAULT_PROFILE } from '../core/profile.js';
import type { Rule } from '../core/rules.js';
import { validateSchema, type SchemaName } from '../core/schemas.js';
import { BASE64_PATTERN, decodeBase64Strict, encodeBase64 } from '../crypto/base64.js';
import { CryptoError } from '../crypto/errors.js';
import type { RsaPublicKey } from '../crypto/keys.js';
import {
  cardResponseCheck,
  describeIssues,
  envelopeCheck,
  errorBodyCheck,
  fail,
  issueRules,
  pass,
  preview,
  refusedCheck,
  resultCheck,
  type CheckContext,
  type Exchange,
  type Finding,
  type ReceivedResponse,
  type ServiceTarget,
  type Step,
  type StrangerKeys,
} from '../runner/api.js';
import { LENIENT_BASE64_REASONS, answerFailureRule, reasonInMessage } from '../wire/crypto-failure.js';
import type { ObservedExchange } from './exchange.js';
import { bodyJson, bodyText, evidenceOf, openWith, type JudgeKeys } from './observed.js';
import { lazyEvidence, type Judgement } from './tally.js';

/** What the judge learnt of an order exchange, for the stream (the order callback that should follow). */
export interface OrderFacts {
  /** An accepted withdrawal (code 0): its callBackId, from the plain request or the result's `id`. */
  acceptedWithdrawal?: string;
  /** The plain request's callBackId, when the request was opened (ORDER-CALLBACK-ID: unique per merchant). */
  requestCallBackId?: string;
  /** The plain request's text, when it was opened. */
  requestPlain?: string;
  /** The request opened with the private key given and broke no rule the judge could check. */
  valid?: boolean;
  /** The service refused it at the HTTP level (4xx): not a business answer (an envelope with a non-zero code). */
  refused?: boolean;
}

interface Endpoint {
  suiteName: 'energy' | 'order';
  plainSchema: SchemaName;
  resultSchema: 'EnergyMaxCountResult' | 'OrderResult';
  path: string;
  ct: string;
  key: string[];
  data: string;
}

const ENDPOINTS: Record<'energy' | 'withdraw', Endpoint> = {
  energy: {
    suiteName: 'energy',
    plainSchema: 'EnergyMaxCountRequest',
    resultSchema: 'EnergyMaxCountResult',
    path: 'ENERGY-PATH',
    ct: 'ENERGY-CT',
    key: ['ENERGY-KEY', 'AUTH-KEY'],
    data: 'ENERGY-DATA',
  },
  withdraw: {
    suiteName: 'order',
    plainSchema: 'OrderRequest',
    resultSchema: 'OrderResult',
    path: 'ORDER-PATH',
    ct: 'ORDER-CT',
    key: ['ORDER-CT', 'AUTH-KEY'],
    data: 'ORDER-DATA',
  },
};

/** How the judged request stands: what a service must do with it. */
type RequestReading =
  | { kind: 'valid'; plain?: string }
  | { kind: 'invalid'; rules: string[]; plain?: string }
  /** Not opened (no private key): only its wire form was judged. */
  | { kind: 'unknown' };

/** A context the runner's checks accept: a service target whose key opens answers, the step's exchange. */
function contextFor(
  exchange: Exchange,
  keys: JudgeKeys,
  endpoint: 'energy' | 'order' | 'card',
  params: Record<string, unknown>,
  rules: Map<string, Rule>,
): CheckContext<never> {
  const publicKey = keys.publicKey as RsaPublicKey;
  const target: ServiceTarget = {
    side: 'service',
    baseUrl: 'http://observed',
    cardBaseUrl: 'http://observed',
    apiKey: keys.apiKey ?? '',
    publicKey,
    profile: keys.profile ?? DEFAULT_PROFILE,
    allowOrders: false,
  };
  const step: Step = { request: { endpoint } };
  return {
    target,
    suite: { name: 'observe', title: 'observe', side: 'service', cases: [] },
    testCase: { id: 'observed', title: 'observed traffic', rules: [], steps: [step] },
    step,
    outcome: { exchanges: [exchange], saved: {} },
    params: params as never,
    rules,
    strangerKeys: { publicKey, privateKey: keys.privateKey } as StrangerKeys,
  };
}

/** The answer as the runner's checks read it: exact JSON, envelope `data` opened with the key the profile names. */
function receivedResponse(observed: ObservedExchange, keys: JudgeKeys): ReceivedResponse | undefined {
  const answer = observed.response;
  if (!answer) return undefined;
  const body = bodyText(answer);
  const response: ReceivedResponse = { status: answer.status, headers: answer.headers, body };
  const json = bodyJson(answer);
  if (json === undefined) return response;
  response.json = json;
  const data = (json as Record<string, unknown> | null)?.data;
  if (typeof data !== 'string' || data.length === 0) return response;
  const opened = openWith(keys, 'response', data);
  if (opened === 'no-key') return response;
  if ('opened' in opened) {
    response.decrypted = { text: opened.opened.text, value: opened.opened.value };
    return response;
  }
  response.decryptError = opened.error;
  // Base64 the data pattern allows (no '=', non-zero unused bits) is read as Java's decoder reads it (U-CRYPTO warns).
  const reason = reasonInMessage(opened.error);
  if ((LENIENT_BASE64_REASONS as ReadonlySet<string>).has(reason) && BASE64_PATTERN.test(data)) {
    const lenient = openWith(keys, 'response', encodeBase64(Buffer.from(data, 'base64')));
    if (lenient !== 'no-key' && 'opened' in lenient) {
      response.decrypted = { text: lenient.opened.text, value: lenient.opened.value };
      response.lenientBase64 = reason;
      delete response.decryptError;
    }
  }
  return response;
}

/** What judging an order request yields: its findings, how the stream reads it, its plain text and fields. */
interface RequestJudgement {
  findings: Finding[];
  reading: RequestReading;
  plain?: string;
  fields?: Record<string, ExactJson>;
}

/** The findings of one order request so far, and the rules it broke. */
interface RequestFindings {
  findings: Finding[];
  broken: string[];
  failWith: (message: string, rules: string[]) => void;
}

function requestFindings(): RequestFindings {
  const findings: Finding[] = [];
  const broken: string[] = [];
  return {
    findings,
    broken,
    failWith: (message, rules) => {
      findings.push(fail(message, rules));
      broken.push(...rules);
    },
  };
}

/**
 * The form envelope of an order request: POST, its Content-Type, the key header, the form field
 * `data` as standard Base64. Returns `data` when it can be opened, undefined when it cannot.
 */
function envelopeData(
  request: ObservedExchange['request'],
  endpoint: Endpoint,
  { findings, failWith }: RequestFindings,
): string | undefined {
  if (request.method.toUpperCase() !== 'POST') failWith(`method ${request.method}, not POST`, [endpoint.path]);
  const type = request.headers['content-type'];
  if (mediaType(type) !== 'application/x-www-form-urlencoded')
    failWith(
      `Content-Type ${type === undefined ? 'absent' : JSON.stringify(type)}, not application/x-www-form-urlencoded`,
      [endpoint.ct],
    );
  if (request.headers['x-api-key'] === undefined || request.headers['x-api-key'] === '')
    failWith('no X-API-KEY header', endpoint.key);
  const data = new URLSearchParams(bodyText(request, 'latin1')).get('data');
  if (data === null || data === '') {
    failWith(`no form field data in the body ${preview(bodyText(request, 'latin1'), 80)}`, [endpoint.data]);
    return undefined;
  }
  if (!BASE64_PATTERN.test(data)) {
    const plusAsSpace = data.includes(' ')
      ? ": a '+' sent unencoded in the form body reads as ' ' (percent-encode the field)"
      : '';
    failWith(`form field data is not standard Base64${plusAsSpace}: ${preview(data, 60)}`, [endpoint.data]);
    return undefined;
  }
  try {
    decodeBase64Strict(data);
  } catch (error) {
    const reason = error instanceof CryptoError ? error.reason : undefined;
    if (!reason || !LENIENT_BASE64_REASONS.has(reason)) {
      failWith(`form field data is not standard Base64: ${(error as Error).message}`, [endpoint.data]);
      return undefined;
    }
    findings.push(
      fail(
        `form field data is Base64 with ${reason}: the pattern of ${endpoint.data} allows it, a strict decoder refuses it (U-CRYPTO)`,
        ['U-CRYPTO'],
      ),
    );
  }
  return data;
}

/** Opens `data` with the private key and judges the plain request against its schema. */
function judgePlainRequest(
  data: string,
  endpoint: Endpoint,
  keys: JudgeKeys,
  { findings, broken, failWith }: RequestFindings,
): RequestJudgement {
  const opened = openWith(
    keys,
    'request',
    BASE64_PATTERN.test(data) ? encodeBase64(Buffer.from(data, 'base64')) : data,
  );
  if (opened === 'no-key') {
    findings.push({
      status: 'skipped',
      message: 'the plain request is not judged: the judge holds no key that opens requests (give the private key)',
    });
    return { findings, reading: broken.length ? { kind: 'invalid', rules: broken } : { kind: 'unknown' } };
  }
  if ('error' in opened) {
    const rule = answerFailureRule(reasonInMessage(opened.error));
    failWith(`form field data does not decrypt with the private key: ${opened.error}`, [rule]);
    return { findings, reading: { kind: 'invalid', rules: broken } };
  }
  const plain = opened.opened.text;
  const value = opened.opened.value;
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof LosslessNumber) {
    failWith(`the plain request is not a JSON object: ${preview(plain)}`, [
      endpoint.suiteName === 'energy' ? 'ENERGY-REQ' : 'ORDER-FIELDS',
    ]);
    return { findings, reading: { kind: 'invalid', rules: broken, plain }, plain };
  }
  const issues = validateSchema(endpoint.plainSchema, value);
  if (issues.length > 0)
    failWith(
      `plain request ${preview(plain)}: ${describeIssues(issues)}`,
      issueRules(issues) ?? [endpoint.suiteName === 'energy' ? 'ENERGY-REQ' : 'ORDER-FIELDS'],
    );
  if (findings.every((finding) => finding.status !== 'failed'))
    findings.push(pass(`form field data opens to ${preview(plain, 80)}`));
  return {
    findings,
    reading: broken.length ? { kind: 'invalid', rules: [...new Set(broken)], plain } : { kind: 'valid', plain },
    plain,
    fields: value as Record<string, ExactJson>,
  };
}

/** Judges the request of an order endpoint: the merchant's side of the ENERGY and ORDER rules, CRYPTO-ENVELOPE and CRYPTO-SAME. */
function judgeOrderRequest(observed: ObservedExchange, endpoint: Endpoint, keys: JudgeKeys): RequestJudgement {
  const request = observed.request;
  if (request.truncated)
    return {
      findings: [
        {
          status: 'skipped',
          message:
            'not judged: the request body was longer than the proxy records of one body (it was forwarded whole)',
        },
      ],
      reading: { kind: 'unknown' },
    };
  const judging = requestFindings();
  const data = envelopeData(request, endpoint, judging);
  if (data === undefined) return { findings: judging.findings, reading: { kind: 'invalid', rules: judging.broken } };
  return judgePlainRequest(data, endpoint, keys, judging);
}

/** A string field of the plain request, when the request was opened and has it. */
function plainField(fields: Record<string, ExactJson> | undefined, field: string): string | undefined {
  const value = fields?.[field];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Envelope `data` that is Base64 of the plain result itself, not of ciphertext: the service skipped
 * the encryption (CRYPTO-ENVELOPE), which the key failure alone would misname as another key (CRYPTO-SAME).
 */
function unencrypted(response: ReceivedResponse): Finding | undefined {
  if (!response.decryptError) return undefined;
  const data = (response.json as { data?: unknown } | undefined)?.data;
  if (typeof data !== 'string' || !BASE64_PATTERN.test(data)) return undefined;
  const text = Buffer.from(data, 'base64').toString('utf8').trim();
  if (!text.startsWith('{')) return undefined;
  try {
    JSON.parse(text);
  } catch {
    return undefined;
  }
  return {
    ...fail(
      `data is the Base64 of the plain result ${preview(text, 120)}, not of RSA ciphertext: business data is RSA-encrypted, then Base64-encoded (CRYPTO-ENVELOPE)`,
      ['CRYPTO-ENVELOPE'],
    ),
    cause: 'undecryptable-answer',
  };
}

/** What judging an order answer needs of its exchange. */
interface OrderAnswer {
  observed: ObservedExchange;
  keys: JudgeKeys;
  rules: Map<string, Rule>;
  endpoint: Endpoint;
  response: ReceivedResponse;
  reading: RequestReading;
  plain: string | undefined;
  fields: Record<string, ExactJson> | undefined;
  /** Records one judgement of the service's answer. */
  answer: (check: string, checkTitle: string, labels: string[], finding: Finding) => void;
}

/**
 * Judges one energy query or order submission exchange: the request (sent by the merchant) and the
 * answer (sent by the service).
 */
export function judgeOrder(
  observed: ObservedExchange,
  keys: JudgeKeys,
  rules: Map<string, Rule>,
): { judgements: Judgement[]; facts: OrderFacts } {
  const endpoint = ENDPOINTS[observed.kind === 'energy' ? 'energy' : 'withdraw'];
  const judgements: Judgement[] = [];
  const { findings, reading, plain, fields } = judgeOrderRequest(observed, endpoint, keys);
  const response = receivedResponse(observed, keys);
  const evidence = lazyEvidence(() =>
    evidenceOf(keys, observed, {
      ...(plain === undefined ? {} : { request: plain }),
      ...(response?.decrypted ? { response: response.decrypted.text } : {}),
    }),
  );
  const title = endpoint.suiteName === 'energy' ? 'energy query' : 'order submission';
  const accepted = response?.status === 200 && String((response.json as { code?: unknown } | undefined)?.code) === '0';
  for (const finding of findings) {
    judgements.push({
      check: `${endpoint.suiteName}-request`,
      title: `the merchant's ${title} request (form, Base64, key header, plain schema)`,
      labels: [endpoint.ct, endpoint.data],
      side: 'merchant',
      finding: requestFinding(finding, accepted),
      seq: observed.seq,
      evidence,
    });
  }
  const facts: OrderFacts = {
    valid: plain !== undefined && findings.every((finding) => finding.status === 'passed'),
    refused: response !== undefined && response.status >= 400 && response.status < 500,
  };
  const callBackId = plainField(fields, 'callBackId');
  if (callBackId !== undefined && endpoint.suiteName === 'order')
    Object.assign(facts, { requestCallBackId: callBackId, ...(plain === undefined ? {} : { requestPlain: plain }) });
  const answer = (check: string, checkTitle: string, labels: string[], finding: Finding) =>
    judgements.push({
      check,
      title: `the service's ${title} answer: ${checkTitle}`,
      labels,
      side: 'service',
      finding,
      seq: observed.seq,
      evidence,
    });
  if (!response) {
    answer(
      'answered',
      'an answer',
      [endpoint.suiteName === 'energy' ? 'ENERGY-RES' : 'ORDER-RES'],
      fail(
        `the service did not answer: ${observed.upstreamError?.message ?? 'no answer'} (the proxy answered ${observed.upstreamError?.gatewayStatus ?? 502})`,
      ),
    );
    return { judgements, facts };
  }
  const judging: OrderAnswer = { observed, keys, rules, endpoint, response, reading, plain, fields, answer };
  if (judgeOrderAnswer(judging) && endpoint.suiteName === 'order' && accepted) {
    const id = (response.decrypted?.value as Record<string, ExactJson> | null | undefined)?.id;
    const symbol = plainField(fields, 'symbol');
    // An ENERGY order leases energy: no withdrawal callback follows it (ORDER-KIND). Without the plain
    // request the kind of the order is unknown, so no callback is expected.
    if (symbol !== undefined && symbol !== 'ENERGY')
      facts.acceptedWithdrawal = callBackId ?? (typeof id === 'string' ? id : undefined);
  }
  return { judgements, facts };
}

/** A request the judge cannot open but the service accepted: the judge's key or profile is not the one in use, not the merchant's fault. */
function requestFinding(finding: Finding, accepted: boolean): Finding {
  const notOurs =
    finding.status === 'failed' && accepted && finding.message.includes('does not decrypt with the private key');
  return notOurs
    ? {
        status: 'skipped',
        message:
          'the request does not open with the private key given, yet the service accepted it: the key or profile given to the judge is not the one in use',
      }
    : finding;
}

/**
 * The service's answer, with the runner's checks: the error body, the refusal of an invalid
 * request, the envelope, the result. True when the result was judged (an accepted order's
 * callback may then be awaited).
 */
function judgeOrderAnswer(judging: OrderAnswer): boolean {
  const { observed, keys, rules, endpoint, response, reading, plain, answer } = judging;
  if (observed.response?.truncated) {
    answer('envelope', envelopeCheck.title, envelopeCheck.rules, {
      status: 'skipped',
      message: 'not judged: the answer was longer than the proxy records of one body',
    });
    return false;
  }
  const exchange: Exchange = {
    request: {
      method: observed.request.method,
      url: `http://observed${observed.request.path}`,
      headers: observed.request.headers,
      body: bodyText(observed.request, 'latin1'),
      ...(plain === undefined ? {} : { plain }),
    },
    response,
  };
  const run = (check: { run(ctx: CheckContext<never>): Finding[] }, params: Record<string, unknown>) =>
    check.run(contextFor(exchange, keys, endpoint.suiteName, params, rules))[0] ?? pass();
  const errorSchema = ({ 401: 'UnauthorizedError', 403: 'ForbiddenError', 404: 'NotFoundError' } as const)[
    response.status as 401 | 403 | 404
  ];
  if (errorSchema) {
    answer(
      'error-body',
      errorBodyCheck.title,
      [({ 401: 'ERR-401', 403: 'ERR-403', 404: 'ERR-404' } as const)[response.status as 401 | 403 | 404]],
      run(errorBodyCheck, { schema: errorSchema }),
    );
    return false;
  }
  if (reading.kind === 'invalid') {
    // The request breaks a rule binding both sides: the service must not accept it (the `refused` check, with leniency.ts).
    answer('refused', refusedCheck.title, reading.rules, run(refusedCheck, {}));
    return false;
  }
  if (response.status !== 200 && response.status >= 400 && response.status < 500) {
    answer(
      'envelope',
      envelopeCheck.title,
      ['U-CODES'],
      fail(
        `HTTP ${response.status} to a request the judge found valid${reading.kind === 'unknown' ? ' on the wire' : ''}: how order endpoints refuse beyond 401/403/404 is open (U-CODES): ${preview(response.body)}`,
        ['U-CODES'],
      ),
    );
    return false;
  }
  return judgeEnvelope(judging, run);
}

/** The envelope (ENV-*, CRYPTO-*) and, when it opened to a success, the result (ENERGY-RES, ORDER-RES). */
function judgeEnvelope(
  { keys, endpoint, response, plain, fields, answer }: OrderAnswer,
  run: (check: { run(ctx: CheckContext<never>): Finding[] }, params: Record<string, unknown>) => Finding,
): boolean {
  const code = (response.json as { code?: unknown } | undefined)?.code;
  const outcome = code !== undefined && String(code) !== '0' ? 'failure' : 'success';
  if (keys.publicKey === undefined && outcome === 'success' && response.status === 200) {
    answer('envelope', envelopeCheck.title, ['ENV-DATA'], {
      status: 'skipped',
      message: 'the envelope data is not judged: the judge holds no key that opens answers (give the public key)',
    });
    return false;
  }
  const envelope = unencrypted(response) ?? run(envelopeCheck, { outcome });
  answer('envelope', envelopeCheck.title, envelopeCheck.rules, envelope);
  if (
    outcome === 'failure' ||
    (envelope.status === 'failed' && envelope.cause === 'undecryptable-answer') ||
    !response.decrypted
  )
    return false;
  // ORDER-RES: id is the request's callBackId; tenantUserId is an integer, compared with the request's only when that is one written as text (as the suites do).
  const tenantUserId = plainField(fields, 'tenantUserId');
  const echo =
    plain === undefined || endpoint.suiteName !== 'order'
      ? undefined
      : {
          id: 'callBackId',
          ...(tenantUserId !== undefined && /^\d+$/.test(tenantUserId) ? { tenantUserId: 'tenantUserId' } : {}),
        };
  const result = run(resultCheck, { schema: endpoint.resultSchema, ...(echo ? { echo } : {}) });
  answer('result', resultCheck.title, [endpoint.suiteName === 'energy' ? 'ENERGY-RES' : 'ORDER-RES'], result);
  return true;
}

/** The card close request's form: POST application/json (CARD-PATH), its fields (CARD-REQ). */
function cardRequestFinding(request: ObservedExchange['request']): { finding: Finding; labels: string[] } {
  const type = mediaType(request.headers['content-type']);
  if (request.truncated)
    return {
      finding: {
        status: 'skipped',
        message: 'not judged: the request body was longer than the proxy records of one body',
      },
      labels: ['CARD-REQ'],
    };
  if (request.method.toUpperCase() !== 'POST' || type !== 'application/json')
    return {
      finding: fail(
        `${request.method} with Content-Type ${JSON.stringify(request.headers['content-type'] ?? null)}: card close is POST application/json`,
        ['CARD-PATH'],
      ),
      labels: ['CARD-PATH'],
    };
  const json = bodyJson(request);
  const issues = json === undefined ? undefined : validateSchema('CardCloseRequest', json);
  if (issues === undefined)
    return { finding: fail(`the body is not JSON: ${preview(bodyText(request))}`, ['CARD-REQ']), labels: ['CARD-REQ'] };
  return {
    finding: issues.length
      ? fail(`request ${preview(bodyText(request))}: ${describeIssues(issues)}`, issueRules(issues) ?? ['CARD-REQ'])
      : pass(),
    labels: ['CARD-REQ'],
  };
}

/** The service's card close answer: its shape (CARD-RES, CARD-ERR), or why it is not judged. */
function cardAnswerFinding(
  observed: ObservedExchange,
  keys: JudgeKeys,
  rules: Map<string, Rule>,
): { title: string; finding: Finding } {
  const response = receivedResponse(observed, keys);
  if (observed.response?.truncated)
    return {
      title: "the service's card close answer",
      finding: { status: 'skipped', message: 'not judged: the answer was longer than the proxy records of one body' },
    };
  if (!response)
    return {
      title: "the service's card close answer",
      finding: fail(`the service did not answer: ${observed.upstreamError?.message ?? 'no answer'}`),
    };
  const request = observed.request;
  const exchange: Exchange = {
    request: {
      method: request.method,
      url: `http://observed${request.path}`,
      headers: request.headers,
      body: bodyText(request),
    },
    response,
  };
  return {
    title: "the service's card close answer: the response shape",
    finding: cardResponseCheck.run(contextFor(exchange, keys, 'card', { outcome: 'any' }, rules))[0] ?? pass(),
  };
}

/** Judges one card close exchange: the request's form (CARD-PATH, CARD-REQ) and the answer's shape (CARD-RES, CARD-ERR). */
export function judgeCardClose(observed: ObservedExchange, keys: JudgeKeys, rules: Map<string, Rule>): Judgement[] {
  const evidence = lazyEvidence(() => evidenceOf(keys, observed));
  const request = cardRequestFinding(observed.request);
  const answer = cardAnswerFinding(observed, keys, rules);
  return [
    {
      check: 'card-request',
      title: "the merchant's card close request (Content-Type, JSON fields)",
      labels: request.labels,
      side: 'merchant',
      finding: request.finding,
      seq: observed.seq,
      evidence,
    },
    {
      check: 'card-response',
      title: answer.title,
      labels: ['CARD-RES'],
      side: 'service',
      finding: answer.finding,
      seq: observed.seq,
      evidence,
    },
  ];
}
