import { ConfigError } from '../core/errors.js';
import { LosslessNumber, parseExactJson, stringifyExact, type ExactJson } from '../core/exact-json.js';
import { resolveProfile } from '../core/profile.js';
import { validateSchema } from '../core/schemas.js';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../service/limits.js';
import { describeIssues, ruleSuffix } from '../core/issue-wording.js';
import { cardFailure, envelopeFailure, toResponse, type Answer } from './answers.js';
import { OPTIONS_SOURCE, resolveMerchants, type ResolvedMerchant } from './merchants.js';
import { createMockState, OPERATIONS, type OperationOutcome, type Plain } from './operations.js';
import { HTTP_SCENARIOS, isWalletScenario, WALLET_SCENARIOS, type WalletScenario } from './scenarios.js';
import type { MerchantCrypto, WalletCodec, WalletEndpoint, WalletMockOptions } from './types.js';

/**
 * The handlers' engine, free of msw: Fetch API `Request` in, `Response` out. The generated module
 * binds each endpoint to an msw `http.*` handler; anything else can call `serve` directly.
 */
export interface WalletMock<Op extends string = string> {
  /** The absolute (or page-relative) URL of an operation. */
  url(operationId: Op): string;
  /** Answers one request to an operation's URL. */
  serve(operationId: Op, request: Request): Promise<Response>;
  /** ERR-404 for any other path (or method) under the base URLs. */
  notFound(request: Request): Response;
  /** URL patterns the catch-all 404 handlers cover: each base and everything below it. */
  readonly fallbackUrls: readonly string[];
}

let nodeCodecLoad: Promise<WalletCodec> | undefined;

/** node:crypto is loaded only when no codec is injected, so a browser bundle never runs it. */
function loadNodeCodec(): Promise<WalletCodec> {
  nodeCodecLoad ??= import('./node-codec.js').then((module) => module.nodeCodec);
  return nodeCodecLoad;
}

function normaliseBase(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new ConfigError('bad-options', `${OPTIONS_SOURCE}: ${name} must be a URL such as http://wallet.test`);
  const base = value.trim().replace(/\/+$/, '');
  if (!base.startsWith('/')) {
    try {
      new URL(base);
    } catch {
      throw new ConfigError('bad-options', `${OPTIONS_SOURCE}: ${name} ${JSON.stringify(value)} is not an absolute URL (or a path for setupWorker)`);
    }
  }
  return base;
}

function mediaType(header: string | null): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

function isObject(value: ExactJson): value is Plain {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof LosslessNumber);
}

/**
 * Creates the engine behind `createWalletHandlers` for a table of endpoints (the generated
 * `WALLET_ENDPOINTS`). Options are checked now (a ConfigError for a typo); keys are loaded by the
 * codec before the first answer.
 *
 * @example const mock = createWalletMock(WALLET_ENDPOINTS, { baseUrl: 'http://wallet.test', merchants });
 * const response = await mock.serve('getEnergyMaxCount', request);
 */
export function createWalletMock<Op extends string>(endpoints: readonly (WalletEndpoint & { operationId: Op })[], options: WalletMockOptions<Op>): WalletMock<Op> {
  if (options === null || typeof options !== 'object') throw new ConfigError('bad-options', `${OPTIONS_SOURCE}: options { baseUrl, merchants } are required`);
  const scenario: WalletScenario = options.scenario ?? 'success';
  if (!isWalletScenario(scenario)) {
    throw new ConfigError('bad-options', `${OPTIONS_SOURCE}: unknown scenario ${JSON.stringify(scenario)} (known: ${WALLET_SCENARIOS.join(', ')})`);
  }
  const bases: Record<string, string> = { base_url: normaliseBase(options.baseUrl, 'baseUrl') };
  bases.card_base_url = options.cardBaseUrl === undefined ? bases.base_url! : normaliseBase(options.cardBaseUrl, 'cardBaseUrl');
  const table = new Map(endpoints.map((endpoint) => [endpoint.operationId, endpoint]));
  for (const endpoint of endpoints) {
    if (bases[endpoint.server] === undefined) throw new ConfigError('bad-options', `${OPTIONS_SOURCE}: operation ${endpoint.operationId} sits under the unknown server variable {${endpoint.server}}`);
  }
  resolveProfile(options.profile ?? {}, `${OPTIONS_SOURCE}: profile`);
  const merchants = resolveMerchants(options.merchants, [...table.keys()], options.profile);
  const byKey = new Map(merchants.map((merchant) => [merchant.apiKey, merchant]));
  const state = createMockState(merchants);
  const notFoundBody = endpoints.find((endpoint) => endpoint.errors['404'])?.errors['404'] ?? { code: 'NOT FOUND', message: 'not found' };

  // Keys load in the background from now on; a key the codec refuses fails every answer with its ConfigError.
  const crypto: Promise<MerchantCrypto[]> = (options.codec ? Promise.resolve(options.codec) : loadNodeCodec()).then((codec) =>
    Promise.all(merchants.map((merchant) => codec.forMerchant(merchant.privateKey, merchant.profile, `${OPTIONS_SOURCE}: merchants[${merchant.index}].privateKey`))),
  );
  crypto.catch(() => undefined);

  const endpointOf = (operationId: Op): WalletEndpoint => {
    const endpoint = table.get(operationId);
    if (!endpoint) throw new ConfigError('bad-options', `${OPTIONS_SOURCE}: no operation ${String(operationId)} in the endpoint table`);
    return endpoint;
  };

  /** ERR-401 / ERR-403 from the spec's bodies; undefined when the key may call the operation. */
  function checkKey(endpoint: WalletEndpoint, request: Request): { merchant?: ResolvedMerchant; answer?: Answer } {
    if (endpoint.apiKeyHeader === null) return {};
    const merchant = byKey.get(request.headers.get(endpoint.apiKeyHeader) ?? '');
    if (!merchant || scenario === 'unauthorized') return { answer: httpError(endpoint, '401') };
    if ((merchant.permissions && !merchant.permissions.has(endpoint.operationId)) || scenario === 'forbidden') return { merchant, answer: httpError(endpoint, '403') };
    return { merchant };
  }

  function httpError(endpoint: WalletEndpoint, status: string): Answer {
    return { status: Number(status), body: endpoint.errors[status] ?? notFoundBody };
  }

  /** The answer in the endpoint's failure shape: an envelope, or a card close failure. */
  function failure(endpoint: WalletEndpoint, kind: 'badContentType' | 'missingData' | 'badBase64' | 'cannotDecrypt' | 'badJson' | 'invalidRequest' | 'tenantType' | 'expiryHours' | 'energyAmount', message: string): Answer {
    if (endpoint.request.encrypted) return envelopeFailure(kind, message);
    state.sequence += 1;
    return cardFailure(kind === 'badContentType' ? 'badContentType' : 'badRequest', message, `req-msw-${String(state.sequence).padStart(6, '0')}`);
  }

  /** The plain request: decrypted form field, or the JSON body; an Answer when it cannot be had. */
  async function readPlain(endpoint: WalletEndpoint, request: Request, merchant: ResolvedMerchant | undefined, cryptos: MerchantCrypto[]): Promise<{ text: string } | { answer: Answer }> {
    const body = await request.text();
    const encrypted = endpoint.request.encrypted;
    if (!encrypted) return { text: body };
    const rules = ruleSuffix(endpoint.rules.data);
    // Raw form parsing: URLSearchParams turns an unencoded '+' into ' ', which the codec then names (plus-as-space).
    const values = new URLSearchParams(body).getAll(encrypted.field);
    if (values.length === 0 || values[0] === '') return { answer: failure(endpoint, 'missingData', `form field ${encrypted.field} is required${rules}`) };
    if (values.length > 1) return { answer: failure(endpoint, 'missingData', `form field ${encrypted.field} appears ${values.length} times; send it once${rules}`) };
    const data = values[0]!;
    if (!merchant) return { answer: failure(endpoint, 'cannotDecrypt', `no X-API-KEY names the merchant whose key opens ${encrypted.field}${rules}`) };
    const codec = cryptos[merchant.index]!;
    const opened = await codec.open(data);
    if (!new RegExp(encrypted.pattern, 'u').test(data)) {
      const why = opened.ok ? '' : `: ${opened.message}`;
      return { answer: failure(endpoint, 'badBase64', `${encrypted.field} does not match ${encrypted.pattern}${why}${rules}`) };
    }
    if (!opened.ok) {
      const kind = opened.kind === 'base64' ? 'badBase64' : opened.kind === 'text' ? 'badJson' : 'cannotDecrypt';
      return { answer: failure(endpoint, kind, `cannot read ${encrypted.field}: ${opened.message}${rules}`) };
    }
    return { text: opened.text };
  }

  /** Parses and validates the plain request against its spec schema; failures name the rules broken. */
  function validate(endpoint: WalletEndpoint, text: string): { plain: Plain } | { answer: Answer } {
    const what = endpoint.request.encrypted ? `the decrypted ${endpoint.request.encrypted.field}` : 'the body';
    const jsonRules = ruleSuffix(endpoint.request.encrypted ? endpoint.rules.data : endpoint.rules.request);
    let value: ExactJson;
    try {
      value = parseExactJson(text);
    } catch (error) {
      return { answer: failure(endpoint, 'badJson', `${what} is not JSON: ${(error as Error).message}${jsonRules}`) };
    }
    if (!isObject(value)) return { answer: failure(endpoint, 'badJson', `${what} is JSON but not an object${jsonRules}`) };
    const requestRules = ruleSuffix(endpoint.rules.request);
    if (nestedDeeperThan(value)) return { answer: failure(endpoint, 'invalidRequest', `the JSON is nested deeper than ${MAX_JSON_DEPTH} levels${requestRules}`) };
    const schema = endpoint.request.encrypted?.plaintext ?? endpoint.request.schema;
    const issues = validateSchema(schema, value);
    if (issues.length > 0) {
      const has = (rule: string) => issues.some((issue) => issue.rules.includes(rule));
      const kind = has('ORDER-TENANT-TYPE') ? 'tenantType' : has('ORDER-EXPIRY') ? 'expiryHours' : has('ORDER-ENERGY-AMOUNT') ? 'energyAmount' : 'invalidRequest';
      return { answer: failure(endpoint, kind, describeIssues(issues, { limit: 5, fields: { constants: endpoint.request.constants }, once: true })) };
    }
    // A number a float cannot hold (1e999) passes a string schema as its text: the type is checked once more.
    const notText = endpoint.request.stringFields.filter((field) => value[field] !== undefined && typeof value[field] !== 'string');
    if (notText.length > 0) return { answer: failure(endpoint, 'invalidRequest', `${notText.join(', ')} must be string${requestRules}`) };
    return { plain: value };
  }

  /** The success answer: the result sealed into an envelope, or the plain body; checked against the spec. */
  async function answerResult(endpoint: WalletEndpoint, result: unknown, crypto: MerchantCrypto | undefined): Promise<Answer> {
    const encrypted = endpoint.response.encrypted;
    const resultText = stringifyExact(result);
    selfCheck(endpoint.operationId, encrypted?.plaintext ?? endpoint.response.schema, parseExactJson(resultText));
    if (!encrypted) return { status: 200, body: result, resultText };
    const body = { code: 0, message: '', [encrypted.field]: await crypto!.seal(resultText) };
    selfCheck(endpoint.operationId, endpoint.response.schema, body);
    return { status: 200, body, resultText };
  }

  async function serve(operationId: Op, request: Request): Promise<Response> {
    const endpoint = endpointOf(operationId);
    const call = (answer: Answer, merchant?: ResolvedMerchant, plainText?: string): Response => {
      options.onCall?.({
        operationId,
        scenario,
        status: answer.status,
        body: answer.body,
        ...(merchant ? { userId: merchant.userId.toString() } : {}),
        ...(plainText === undefined ? {} : { plainText }),
        ...(answer.resultText === undefined ? {} : { resultText: answer.resultText }),
      });
      return toResponse(answer);
    };
    if (HTTP_SCENARIOS[scenario] === '404' && endpoint.errors['404']) return call(httpError(endpoint, '404'));
    const key = checkKey(endpoint, request);
    if (key.answer) return call(key.answer, key.merchant);
    const cryptos = await crypto;
    const contentType = request.headers.get('content-type');
    if (mediaType(contentType) !== endpoint.request.mediaType) {
      const message = `Content-Type must be ${endpoint.request.mediaType}, not ${JSON.stringify(contentType ?? '')}${ruleSuffix(endpoint.rules.contentType)}`;
      return call(failure(endpoint, 'badContentType', message), key.merchant);
    }
    const read = await readPlain(endpoint, request, key.merchant, cryptos);
    if ('answer' in read) return call(read.answer, key.merchant);
    const checked = validate(endpoint, read.text);
    if ('answer' in checked) return call(checked.answer, key.merchant, read.text);
    const operation = OPERATIONS[operationId];
    const outcome: OperationOutcome = operation
      ? operation({ merchant: key.merchant, merchants, plain: checked.plain, scenario, state })
      : { ok: true, result: endpoint.response.example };
    const merchant = outcome.merchant ?? key.merchant;
    if (!outcome.ok) return call(outcome.answer, merchant, read.text);
    return call(await answerResult(endpoint, outcome.result, merchant && cryptos[merchant.index]), merchant, read.text);
  }

  return {
    url: (operationId) => {
      const endpoint = endpointOf(operationId);
      return `${bases[endpoint.server]}${endpoint.path}`;
    },
    serve,
    notFound: () => toResponse({ status: 404, body: notFoundBody }),
    fallbackUrls: [...new Set(Object.values(bases))].flatMap((base) => [base, `${base}/*`]),
  };
}

/** The handlers answer only what the spec allows: a result that breaks its schema is a bug here, not a finding. */
function selfCheck(operationId: string, schema: WalletEndpoint['response']['schema'], value: unknown): void {
  const issues = validateSchema(schema, value);
  if (issues.length > 0) throw new Error(`${OPTIONS_SOURCE}: the ${operationId} answer breaks ${schema}: ${issues.map((issue) => issue.message).join('; ')}`);
}
