/**
 * The service pipeline, written once: a plain request (the credential header, the Content-Type,
 * the body as text) in, `{status, headers, body}` out. The key verdict (ERR-401, ERR-403), the
 * media type (ENERGY-CT, ORDER-CT, CARD-PATH), the form field (ENERGY-DATA, ORDER-DATA), the
 * decryption and the classification of its failure (src/wire/crypto-failure.ts), the JSON and its
 * depth (U-LIMITS), the operation (src/service/operations.ts) and the answer's body (ENV-*, CARD-*,
 * U-CODES) happen here, in this order, with one wording. The emulator (node:http, SQLite) and the
 * MSW handlers (Fetch API, memory) are adapters: they read the request, hand the pipeline their
 * key ring, codec and operations, and write what it answers.
 *
 * No transport and no node:* import: the pipeline runs in a browser bundle (setupWorker).
 */
import { LosslessNumber, parseExactJson, stringifyExact, type ExactJson } from '../core/exact-json.js';
import { ruleSuffix } from '../core/issue-wording.js';
import type { CryptoFailureReason } from '../crypto/errors.js';
import {
  CARD_ERROR_CODES,
  cardFailureBody,
  CARD_HTTP_STATUS,
  ENVELOPE_CODES,
  ENVELOPE_HTTP_STATUS,
  HTTP_ERROR_BODIES,
  type CardFailure,
  type EnvelopeFailure,
} from './codes.js';
import type { CardOutcome, EnvelopeOutcome, Plain } from './service-context.js';
import { MAX_REQUEST_DEPTH, nestedDeeperThan } from './limits.js';
import type { ServicePolicies } from './policies.js';
import type { MerchantId } from './state.js';

/** One check the pipeline makes before decrypting: the X-API-KEY (ERR-401, ERR-403), the Content-Type (ENERGY-CT, ORDER-CT), the form field data (ENERGY-DATA, ORDER-DATA). */
export type RequestCheck = 'key' | 'content-type' | 'form';

/** The order the rules support: the key first, so a request without credentials gets 401 whatever its body (ERR-401). */
const REQUEST_CHECK_ORDER: readonly RequestCheck[] = Object.freeze(['key', 'content-type', 'form']);

/** A merchant as the pipeline needs it: its userId and its crypto. */
interface PipelineMerchant {
  readonly userId: MerchantId | number;
}

/** The verdict on an `X-API-KEY` for one operation; `why` goes to the log only. */
type PipelineKeyVerdict<M> = { ok: true; merchant: M } | { ok: false; status: 401 | 403; why: string };

/** Judges a request's `X-API-KEY` (the emulator's ring over core/api-keys.ts, the MSW handlers' table). */
export interface PipelineKeys<M> {
  check(header: string | readonly string[] | undefined, operation: string, now: number): PipelineKeyVerdict<M>;
}

/** Why a request's encrypted field did not open; the kind picks the envelope code. */
export type OpenFailureKind = 'base64' | 'decrypt' | 'text';

/** The plain text of a request's encrypted field, or why it did not open. */
export type OpenOutcome = { ok: true; text: string } | { ok: false; kind: OpenFailureKind; message: string };

/** One merchant's crypto, bound to its key and profile: synchronous (the emulator's native engine) or not (WebCrypto, forge). */
export interface PipelineCodec {
  /** Decrypts a request's field (CRYPTO-SAME); `accept`: lenient Base64 reasons the service reads (U-CRYPTO). */
  open(data: string, accept: ReadonlySet<CryptoFailureReason>): OpenOutcome | Promise<OpenOutcome>;
  /** Encrypts a result's exact JSON text for the envelope's data. */
  seal(json: string): string | Promise<string>;
}

/** One endpoint as the pipeline serves it (the spec's operation: its media type, encrypted field, answers, rules). */
export interface PipelineEndpoint {
  readonly operation: string;
  /** `required`: every request carries a key (ERR-401); `when-sent`: a key sent anyway is checked (U-CARD-AUTH). */
  readonly key: 'required' | 'when-sent';
  /** The one media type the request body must have. */
  readonly mediaType: string;
  /** The form field carrying encrypted JSON and its pattern, answered in envelopes; null: a plain JSON body answered in the card close shape. */
  readonly encrypted: { readonly field: string; readonly pattern: string } | null;
  /** Rule ids a refusal names: of the Content-Type, of the encrypted field, of the plain request. */
  readonly rules: {
    readonly contentType: readonly string[];
    readonly data: readonly string[];
    readonly request: readonly string[];
  };
}

/** The service's three endpoints (ENERGY-*, ORDER-*, CARD-*); `src/service/pipeline.test.ts` holds them to the spec's table. */
export const SERVICE_ENDPOINTS: Readonly<
  Record<'getEnergyMaxCount' | 'withdrawWithoutVerify' | 'closeCard', PipelineEndpoint>
> = Object.freeze({
  getEnergyMaxCount: {
    operation: 'getEnergyMaxCount',
    key: 'required',
    mediaType: 'application/x-www-form-urlencoded',
    encrypted: { field: 'data', pattern: '^[A-Za-z0-9+/]+={0,2}$' },
    rules: { contentType: ['ENERGY-CT'], data: ['ENERGY-DATA'], request: ['ENERGY-REQ'] },
  },
  withdrawWithoutVerify: {
    operation: 'withdrawWithoutVerify',
    key: 'required',
    mediaType: 'application/x-www-form-urlencoded',
    encrypted: { field: 'data', pattern: '^[A-Za-z0-9+/]+={0,2}$' },
    rules: { contentType: ['ORDER-CT'], data: ['ORDER-DATA'], request: ['ORDER-FIELDS', 'ORDER-KIND'] },
  },
  closeCard: {
    operation: 'closeCard',
    key: 'when-sent',
    mediaType: 'application/json',
    encrypted: null,
    rules: { contentType: ['CARD-PATH'], data: [], request: ['CARD-REQ'] },
  },
});

/** The business part of one operation: the merchant the key named (card close: if one was sent), the plain request. */
export type PipelineOperation<M> = (merchant: M | undefined, plain: Plain) => EnvelopeOutcome | CardOutcome;

/** An HTTP answer outside the envelope: status and JSON body. */
export interface HttpAnswer {
  status: number;
  body: unknown;
}

/** The success envelope of the order endpoints before it is sent (ENV-CODE, ENV-MSG, ENV-DATA). */
export interface SuccessEnvelope {
  code: unknown;
  message: unknown;
  data: string;
}

/**
 * Seams of the pipeline, each named for what it shapes: it gets what the pipeline chose and returns
 * what to use instead. Absent: the pipeline's choice. The toolkit's own tests build deliberately
 * faulty emulators from them (test/fixtures/emulator-faults.ts); nothing here names a fault.
 */
export interface PipelineShapes<M> {
  /** The order of the request checks before decryption: gets the pipeline's; a check left out runs after the listed ones. */
  requestChecks?(order: readonly RequestCheck[], request: { operation: string }): readonly RequestCheck[];
  /** The X-API-KEY the key check reads: gets the header as sent (undefined: none). */
  apiKey?(header: string | undefined, request: { operation: string }): string | undefined;
  /** Whether the request's Content-Type is accepted: `conforming` is the pipeline's answer, `type` the media type (undefined: none), `header` the whole header. */
  acceptsContentType?(
    type: string | undefined,
    conforming: boolean,
    request: { operation: string; header: string | undefined },
  ): boolean;
  /** The encrypted field's value as the codec gets it. */
  requestData?(data: string): string;
  /** The decrypted request text as the JSON parser gets it, with the merchant whose key opened it. */
  requestText?(text: string, merchant: M): string;
  /** The success envelope to send for `result` sealed for `merchant`. */
  successEnvelope?(envelope: SuccessEnvelope, sealed: { result: unknown; merchant: M }): SuccessEnvelope;
  /** The HTTP error for a refused key (401), a key without the permission (403). */
  httpError?(kind: 'unauthorized' | 'forbidden', answer: HttpAnswer): HttpAnswer;
  /** A card close failure body (CARD-ERR) before it is sent. */
  cardFailure?(body: Record<string, unknown>): Record<string, unknown>;
  /** A card close success body (CARD-RES) before it is sent. */
  cardSuccess?(body: Record<string, unknown>): Record<string, unknown>;
}

/** What one adapter gives the pipeline, once. */
export interface PipelineSetup<M extends PipelineMerchant> {
  readonly keys: PipelineKeys<M>;
  /** The merchant's crypto (the half its profile names per direction). */
  codec(merchant: M): PipelineCodec;
  /** The business part of each operation by operationId. */
  operations(operation: string): PipelineOperation<M> | undefined;
  /** The policies in force now (U-CODES refusals, U-CRYPTO Base64 forms): read per request. */
  policies(): ServicePolicies;
  /** Lenient Base64 reasons the policies accept (U-CRYPTO). */
  acceptedBase64(policies: ServicePolicies): ReadonlySet<CryptoFailureReason>;
  now(): number;
  /** A new card close requestId. */
  requestId(): string;
  /** Error bodies outside the envelope (ERR-401, ERR-403); default HTTP_ERROR_BODIES. */
  readonly errorBodies?: { unauthorized: unknown; forbidden: unknown };
  readonly shapes?: PipelineShapes<M>;
}

/** A request as the adapter read its head; the body is read when the pipeline asks for it. */
export interface PipelineRequest {
  /** The X-API-KEY header(s) as sent. */
  readonly apiKey: string | readonly string[] | undefined;
  /** The Content-Type header as sent. */
  readonly contentType: string | undefined;
  /** The body as UTF-8 text; undefined when the adapter answered by itself (a body over its limit, a broken connection). */
  body(): Promise<string | undefined>;
}

/** What the pipeline answers. */
export interface PipelineAnswer {
  status: number;
  headers: Record<string, string>;
  /** A JSON value (exact numbers kept: write it with stringifyExact). */
  body: unknown;
  /** Why the request ended so: for the log, never for the answer. */
  why?: string;
  /** The merchant the key (or card close's merchantId) named. */
  merchant?: MerchantId;
  /** The decrypted (or plain JSON) request text exactly as received, when the request got that far. */
  plainText?: string;
  /** The plain result before sealing, on success, and its exact JSON text. */
  result?: unknown;
  resultText?: string;
}

const JSON_HEADERS = Object.freeze({ 'content-type': 'application/json' });

/** The media type of a Content-Type header: lower case, parameters dropped. */
function mediaTypeOf(header: string | undefined | null): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

/** A failure message naming its rules (those it does not name already). */
function withRules(message: string, rules: readonly string[]): string {
  return message + ruleSuffix(rules.filter((rule) => !message.includes(rule)));
}

function isObject(value: ExactJson): value is Plain {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof LosslessNumber);
}

/** One request in the pipeline: its endpoint, the policies read for it, and how it answers a failure. */
interface Served {
  readonly endpoint: PipelineEndpoint;
  readonly request: PipelineRequest;
  readonly policies: ServicePolicies;
  /** Card close's requestId; empty for the envelope endpoints. */
  readonly requestId: string;
  fail(failure: EnvelopeFailure | CardFailure, message: string): PipelineAnswer;
}

/** What an operation returns on success. */
type OperationResult = Extract<EnvelopeOutcome | CardOutcome, { ok: true }>['result'];

/** What the form check read: the body's text (card close), the encrypted field's value, or the answer that ends the request (undefined: the adapter answered). */
type FormRead = { text: string } | { data: string } | { end: PipelineAnswer | undefined };

/**
 * The pipeline over one adapter's setup: `serve(endpoint, request)` answers one request.
 *
 * @example const serve = createPipeline(setup); const answer = await serve(SERVICE_ENDPOINTS.getEnergyMaxCount, request);
 */
export function createPipeline<M extends PipelineMerchant>(
  setup: PipelineSetup<M>,
): (endpoint: PipelineEndpoint, request: PipelineRequest) => Promise<PipelineAnswer | undefined> {
  const pipeline = new Pipeline(setup);
  return (endpoint, request) => pipeline.serve(endpoint, request);
}

/** The steps of `createPipeline`, in the order they run; the setup's parts are read once. */
class Pipeline<M extends PipelineMerchant> {
  private readonly setup: PipelineSetup<M>;
  private readonly shapes: PipelineShapes<M>;
  private readonly errorBodies: { unauthorized: unknown; forbidden: unknown };
  private readonly patterns = new Map<string, RegExp>();

  constructor(setup: PipelineSetup<M>) {
    this.setup = setup;
    this.shapes = setup.shapes ?? {};
    this.errorBodies = setup.errorBodies ?? HTTP_ERROR_BODIES;
  }

  private patternOf(source: string): RegExp {
    let pattern = this.patterns.get(source);
    if (!pattern) this.patterns.set(source, (pattern = new RegExp(source, 'u')));
    return pattern;
  }

  private httpError(kind: 'unauthorized' | 'forbidden', why: string): PipelineAnswer {
    const answer: HttpAnswer = { status: kind === 'unauthorized' ? 401 : 403, body: this.errorBodies[kind] };
    const sent = this.shapes.httpError ? this.shapes.httpError(kind, answer) : answer;
    return { status: sent.status, headers: { ...JSON_HEADERS }, body: sent.body, why };
  }

  private envelopeFailure(policies: ServicePolicies, failure: EnvelopeFailure, message: string): PipelineAnswer {
    const why = `${ENVELOPE_CODES[failure]} ${message}`;
    if (policies.refusals === 'http')
      return {
        status: ENVELOPE_HTTP_STATUS[failure],
        headers: { ...JSON_HEADERS },
        body: { code: String(ENVELOPE_CODES[failure]), message },
        why,
      };
    return { status: 200, headers: { ...JSON_HEADERS }, body: { code: ENVELOPE_CODES[failure], message }, why };
  }

  private cardFailure(
    policies: ServicePolicies,
    requestId: string,
    failure: CardFailure,
    detail: string,
  ): PipelineAnswer {
    const body = cardFailureBody(requestId, failure, detail);
    return {
      status: policies.refusals === 'http' ? CARD_HTTP_STATUS[failure] : 200,
      headers: { ...JSON_HEADERS },
      body: this.shapes.cardFailure ? this.shapes.cardFailure(body) : body,
      why: `${CARD_ERROR_CODES[failure]} ${detail}`,
    };
  }

  /** Answers one request: the checks before decryption in their order, the decryption, then the operation. */
  async serve(endpoint: PipelineEndpoint, request: PipelineRequest): Promise<PipelineAnswer | undefined> {
    const { setup, shapes } = this;
    const policies = setup.policies();
    const encrypted = endpoint.encrypted;
    // Card close numbers its answer before anything else, so every answer of it carries one.
    const requestId = encrypted ? '' : setup.requestId();
    const fail = (failure: EnvelopeFailure | CardFailure, message: string): PipelineAnswer =>
      encrypted
        ? this.envelopeFailure(policies, failure as EnvelopeFailure, message)
        : this.cardFailure(policies, requestId, failure as CardFailure, message);
    const served: Served = { endpoint, request, policies, requestId, fail };

    const listed = shapes.requestChecks
      ? shapes.requestChecks(REQUEST_CHECK_ORDER, { operation: endpoint.operation })
      : REQUEST_CHECK_ORDER;
    let merchant: M | undefined;
    let text: string | undefined;
    let data = '';
    for (const check of [...listed, ...REQUEST_CHECK_ORDER.filter((one) => !listed.includes(one))]) {
      if (check === 'key') {
        const sent = request.apiKey;
        const header = shapes.apiKey
          ? shapes.apiKey(typeof sent === 'string' ? sent : undefined, { operation: endpoint.operation })
          : sent;
        if (endpoint.key === 'when-sent' && header === undefined) continue;
        const verdict = setup.keys.check(header, endpoint.operation, setup.now());
        if (!verdict.ok) return this.httpError(verdict.status === 401 ? 'unauthorized' : 'forbidden', verdict.why);
        merchant = verdict.merchant;
      } else if (check === 'content-type') {
        const refused = this.checkContentType(served);
        if (refused) return refused;
      } else {
        const read = await this.readForm(served);
        if ('end' in read) return read.end;
        if ('text' in read) text = read.text;
        else data = read.data;
      }
    }
    if (encrypted) {
      // Every check ran (one left out of the order runs last), so the key's merchant is known here.
      if (!merchant) throw new Error('the X-API-KEY check did not run');
      const opened = await this.open(served, merchant, data);
      if (typeof opened !== 'string') return opened;
      text = opened;
    }
    return this.operate(served, merchant, text!);
  }

  /** The Content-Type check (ENERGY-CT, ORDER-CT, CARD-PATH): the refusal, or undefined when accepted. */
  private checkContentType({ endpoint, request, fail }: Served): PipelineAnswer | undefined {
    const type = mediaTypeOf(request.contentType);
    const conforming = type === endpoint.mediaType;
    const accepted = this.shapes.acceptsContentType
      ? this.shapes.acceptsContentType(request.contentType === undefined ? undefined : type, conforming, {
          operation: endpoint.operation,
          header: request.contentType,
        })
      : conforming;
    if (!accepted)
      return fail(
        'badContentType',
        withRules(
          `Content-Type must be ${endpoint.mediaType}, not ${JSON.stringify(request.contentType ?? '')}`,
          endpoint.rules.contentType,
        ),
      );
    return undefined;
  }

  /** The body, and for the envelope endpoints its one form field (ENERGY-DATA, ORDER-DATA). */
  private async readForm({ endpoint, request, fail }: Served): Promise<FormRead> {
    const encrypted = endpoint.encrypted;
    const body = await request.body();
    if (body === undefined) return { end: undefined };
    if (!encrypted) return { text: body };
    // Raw form parsing: URLSearchParams turns an unencoded '+' into ' ', which the codec then names (plus-as-space).
    const values = new URLSearchParams(body).getAll(encrypted.field);
    const rules = endpoint.rules.data;
    if (values.length === 0 || values[0] === '')
      return { end: fail('missingData', withRules(`form field ${encrypted.field} is required`, rules)) };
    if (values.length > 1)
      return {
        end: fail(
          'missingData',
          withRules(`form field ${encrypted.field} appears ${values.length} times; send it once`, rules),
        ),
      };
    return { data: this.shapes.requestData ? this.shapes.requestData(values[0]!) : values[0]! };
  }

  /** The encrypted field's plain text (CRYPTO-SAME), or the refusal of its pattern or its decryption. */
  private async open(
    { endpoint, policies, fail }: Served,
    merchant: M,
    data: string,
  ): Promise<string | PipelineAnswer> {
    const encrypted = endpoint.encrypted!;
    const rules = endpoint.rules.data;
    const opened = await this.setup.codec(merchant).open(data, this.setup.acceptedBase64(policies));
    if (!this.patternOf(encrypted.pattern).test(data)) {
      return fail(
        'badBase64',
        withRules(
          `${encrypted.field} does not match ${encrypted.pattern}${opened.ok ? '' : `: ${opened.message}`}`,
          rules,
        ),
      );
    }
    if (!opened.ok) {
      const failure: EnvelopeFailure =
        opened.kind === 'base64' ? 'badBase64' : opened.kind === 'text' ? 'badJson' : 'cannotDecrypt';
      return fail(failure, withRules(`cannot read ${encrypted.field}: ${opened.message}`, rules));
    }
    return this.shapes.requestText ? this.shapes.requestText(opened.text, merchant) : opened.text;
  }

  /** The plain request's JSON (an object, not too deep), the operation on it, and its answer. */
  private async operate(served: Served, merchant: M | undefined, plainText: string): Promise<PipelineAnswer> {
    const { endpoint, fail } = served;
    const encrypted = endpoint.encrypted;
    const named = merchant ? { merchant: BigInt(merchant.userId) } : {};
    const what = encrypted ? `the decrypted ${encrypted.field}` : 'the body';
    const jsonRules = encrypted ? endpoint.rules.data : endpoint.rules.request;
    let value: ExactJson;
    try {
      value = parseExactJson(plainText);
    } catch (error) {
      return {
        ...fail(
          encrypted ? 'badJson' : 'badRequest',
          withRules(`${what} is not JSON: ${(error as Error).message}`, jsonRules),
        ),
        ...named,
        plainText,
      };
    }
    if (!isObject(value))
      return {
        ...fail(encrypted ? 'badJson' : 'badRequest', withRules(`${what} is JSON but not an object`, jsonRules)),
        ...named,
        plainText,
      };
    if (nestedDeeperThan(value)) {
      return {
        ...fail(
          encrypted ? 'invalidRequest' : 'badRequest',
          withRules(`${what} is nested deeper than ${MAX_REQUEST_DEPTH} levels`, endpoint.rules.request),
        ),
        ...named,
        plainText,
      };
    }
    const operation = this.setup.operations(endpoint.operation);
    if (!operation) throw new Error(`no operation ${endpoint.operation}`);
    const outcome = operation(merchant, value);
    const who = 'merchant' in outcome && outcome.merchant !== undefined ? { merchant: outcome.merchant } : named;
    if (!outcome.ok) {
      if (outcome.failure === 'forbidden')
        return { ...this.httpError('forbidden', outcome.message), ...who, plainText };
      return { ...fail(outcome.failure, withRules(outcome.message, outcome.rules)), ...who, plainText };
    }
    return this.succeed(served, merchant, value, outcome.result, { ...who, plainText });
  }

  /** The success answer: the sealed envelope (ENV-*), or card close's plain JSON body (CARD-RES). */
  private async succeed(
    served: Served,
    merchant: M | undefined,
    value: Plain,
    result: OperationResult,
    about: Pick<PipelineAnswer, 'merchant' | 'plainText'>,
  ): Promise<PipelineAnswer> {
    if (served.endpoint.encrypted) {
      const resultText = stringifyExact(result);
      const envelope: SuccessEnvelope = {
        code: 0,
        message: '',
        data: await this.setup.codec(merchant!).seal(resultText),
      };
      const body = this.shapes.successEnvelope
        ? this.shapes.successEnvelope(envelope, { result, merchant: merchant! })
        : envelope;
      return { status: 200, headers: { ...JSON_HEADERS }, body, ...about, result, resultText };
    }
    // Card close answers in plain JSON: the whole success body is its result (CARD-RES).
    const answer: Record<string, unknown> = {
      success: true,
      errorCode: '',
      errorMessage: '',
      errorMessageEn: '',
      detailMessage: '',
      requestId: served.requestId,
      data: result,
    };
    return {
      status: 200,
      headers: { ...JSON_HEADERS },
      body: this.shapes.cardSuccess ? this.shapes.cardSuccess(answer) : answer,
      why: `closed ${String(value.powerCardId)}`,
      ...about,
      result: answer,
      resultText: stringifyExact(answer),
    };
  }
}
