import { ConfigError } from '../core/errors.js';
import { parseExactJson, stringifyExact } from '../core/exact-json.js';
import { resolveProfile } from '../core/profile.js';
import { validateSchema } from '../core/schemas.js';
import { SERVICE_OPERATIONS } from '../service/operations.js';
import { acceptedBase64 } from '../service/policies.js';
import {
  createPipeline,
  type PipelineAnswer,
  type PipelineCodec,
  type PipelineEndpoint,
  type PipelineKeys,
  type PipelineOperation,
} from '../service/pipeline.js';
import { OPTIONS_SOURCE, resolveMerchants, type ResolvedMerchant } from './merchants.js';
import { createMockState, mockServiceContext, nextId } from './operations.js';
import {
  HTTP_SCENARIOS,
  isWalletScenario,
  scenarioKeys,
  scenarioOperations,
  WALLET_SCENARIOS,
  type WalletScenario,
} from './scenarios.js';
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
  if (typeof value !== 'string' || value.trim() === '')
    throw new ConfigError('bad-options', `${OPTIONS_SOURCE}: ${name} must be a URL such as http://wallet.test`);
  const base = value.trim().replace(/\/+$/, '');
  if (!base.startsWith('/')) {
    try {
      new URL(base);
    } catch {
      throw new ConfigError(
        'bad-options',
        `${OPTIONS_SOURCE}: ${name} ${JSON.stringify(value)} is not an absolute URL (or a path for setupWorker)`,
      );
    }
  }
  return base;
}

/** An endpoint of the table as the pipeline serves it (src/service/pipeline.ts). */
function pipelineEndpoint(endpoint: WalletEndpoint): PipelineEndpoint {
  const encrypted = endpoint.request.encrypted;
  return {
    operation: endpoint.operationId,
    // An operation without a credential in the spec (card close, U-CARD-AUTH) still checks a key that is sent.
    key: endpoint.apiKeyHeader === null ? 'when-sent' : 'required',
    mediaType: endpoint.request.mediaType,
    encrypted: encrypted ? { field: encrypted.field, pattern: encrypted.pattern } : null,
    rules: { contentType: endpoint.rules.contentType, data: endpoint.rules.data, request: endpoint.rules.request },
  };
}

/** The answer as a Fetch API Response (msw resolvers may return one), numbers kept exact. */
function toResponse(answer: { status: number; body: unknown }): Response {
  return new Response(stringifyExact(answer.body), {
    status: answer.status,
    headers: { 'content-type': 'application/json' },
  });
}

/**
 * Creates the engine behind `createWalletHandlers` for a table of endpoints (the generated
 * `WALLET_ENDPOINTS`). Options are checked now (a ConfigError for a typo); keys are loaded by the
 * codec before the first answer.
 *
 * @example const mock = createWalletMock(WALLET_ENDPOINTS, { baseUrl: 'http://wallet.test', merchants });
 * const response = await mock.serve('getEnergyMaxCount', request);
 */
export function createWalletMock<Op extends string>(
  endpoints: readonly (WalletEndpoint & { operationId: Op })[],
  options: WalletMockOptions<Op>,
): WalletMock<Op> {
  const { scenario, bases } = checkOptions(endpoints, options);
  const engine = new MockEngine(endpoints, options, scenario);
  return {
    url: (operationId) => {
      const endpoint = engine.endpointOf(operationId);
      return `${bases[endpoint.server]}${endpoint.path}`;
    },
    serve: (operationId, request) => engine.serve(operationId, request),
    notFound: () => toResponse({ status: 404, body: engine.notFoundBody }),
    fallbackUrls: [...new Set(Object.values(bases))].flatMap((base) => [base, `${base}/*`]),
  };
}

/** The scenario and the base URL of each server variable; a ConfigError for anything the mock cannot serve. */
function checkOptions(
  endpoints: readonly WalletEndpoint[],
  options: WalletMockOptions<string>,
): { scenario: WalletScenario; bases: Record<string, string> } {
  if (options === null || typeof options !== 'object')
    throw new ConfigError('bad-options', `${OPTIONS_SOURCE}: options { baseUrl, merchants } are required`);
  const scenario: WalletScenario = options.scenario ?? 'success';
  if (!isWalletScenario(scenario)) {
    throw new ConfigError(
      'bad-options',
      `${OPTIONS_SOURCE}: unknown scenario ${JSON.stringify(scenario)} (known: ${WALLET_SCENARIOS.join(', ')})`,
    );
  }
  const bases: Record<string, string> = { base_url: normaliseBase(options.baseUrl, 'baseUrl') };
  bases.card_base_url =
    options.cardBaseUrl === undefined ? bases.base_url! : normaliseBase(options.cardBaseUrl, 'cardBaseUrl');
  for (const endpoint of endpoints) {
    if (bases[endpoint.server] === undefined)
      throw new ConfigError(
        'bad-options',
        `${OPTIONS_SOURCE}: operation ${endpoint.operationId} sits under the unknown server variable {${endpoint.server}}`,
      );
  }
  return { scenario, bases };
}

/** The mock's merchants, state and pipeline: one request in, the scenario's answer out. */
class MockEngine<Op extends string> {
  readonly notFoundBody: unknown;
  readonly #options: WalletMockOptions<Op>;
  readonly #scenario: WalletScenario;
  readonly #tableOf: Map<Op, WalletEndpoint & { operationId: Op }>;
  readonly #served: Map<Op, PipelineEndpoint>;
  readonly #byUserId: Map<bigint, ResolvedMerchant>;
  readonly #serveByPipeline: ReturnType<typeof createPipeline<ResolvedMerchant>>;

  constructor(
    endpoints: readonly (WalletEndpoint & { operationId: Op })[],
    options: WalletMockOptions<Op>,
    scenario: WalletScenario,
  ) {
    this.#options = options;
    this.#scenario = scenario;
    this.#tableOf = new Map(endpoints.map((endpoint) => [endpoint.operationId, endpoint]));
    this.#served = new Map(endpoints.map((endpoint) => [endpoint.operationId, pipelineEndpoint(endpoint)]));
    resolveProfile(options.profile ?? {}, `${OPTIONS_SOURCE}: profile`);
    const merchants = resolveMerchants(options.merchants, [...this.#tableOf.keys()], options.profile);
    this.#byUserId = new Map(merchants.map((merchant) => [merchant.userId, merchant]));
    const state = createMockState(merchants);
    const service = mockServiceContext(state);
    this.notFoundBody = endpoints.find((endpoint) => endpoint.errors['404'])?.errors['404'] ?? {
      code: 'NOT FOUND',
      message: 'not found',
    };
    const errorsOf = (status: string) => endpoints.find((endpoint) => endpoint.errors[status])?.errors[status];
    const codecs = merchantCodecs(options, merchants);
    const operations = scenarioOperations(SERVICE_OPERATIONS, scenario);
    const serviceOperations: Record<string, PipelineOperation<ResolvedMerchant>> = {
      getEnergyMaxCount: (merchant, plain) => operations.getEnergyMaxCount(service, merchant!.userId, plain),
      withdrawWithoutVerify: (merchant, plain) => operations.withdrawWithoutVerify(service, merchant!.userId, plain),
      closeCard: (merchant, plain) => operations.closeCard(service, plain, merchant?.userId),
    };
    this.#serveByPipeline = createPipeline<ResolvedMerchant>({
      keys: merchantKeys(merchants, scenario),
      codec: (merchant) => codecs[merchant.index]!,
      operations: (operationId) =>
        serviceOperations[operationId] ?? exampleOperation(this.#tableOf.get(operationId as Op)),
      policies: () => service.policies,
      acceptedBase64,
      now: () => Date.now(),
      requestId: () => nextId(state, 'req'),
      errorBodies: {
        unauthorized: errorsOf('401') ?? this.notFoundBody,
        forbidden: errorsOf('403') ?? this.notFoundBody,
      },
    });
  }

  endpointOf(operationId: Op): WalletEndpoint {
    const endpoint = this.#tableOf.get(operationId);
    if (!endpoint)
      throw new ConfigError(
        'bad-options',
        `${OPTIONS_SOURCE}: no operation ${String(operationId)} in the endpoint table`,
      );
    return endpoint;
  }

  async serve(operationId: Op, request: Request): Promise<Response> {
    const endpoint = this.endpointOf(operationId);
    if (HTTP_SCENARIOS[this.#scenario] === '404' && endpoint.errors['404'])
      return this.#answer(operationId, { status: 404, body: endpoint.errors['404'] });
    const header = endpoint.apiKeyHeader ?? 'x-api-key';
    const answer = await this.#serveByPipeline(this.#served.get(operationId)!, {
      apiKey: request.headers.get(header) ?? undefined,
      contentType: request.headers.get('content-type') ?? undefined,
      body: () => request.text(),
    });
    if (!answer) throw new Error(`${OPTIONS_SOURCE}: the request body could not be read`);
    if (answer.status === 200 && answer.result !== undefined) {
      // The handlers answer only what the spec allows: a result that breaks its schema is a bug here, not a finding.
      selfCheck(
        endpoint.operationId,
        endpoint.response.encrypted?.plaintext ?? endpoint.response.schema,
        parseExactJson(answer.resultText!),
      );
      if (endpoint.response.encrypted) selfCheck(endpoint.operationId, endpoint.response.schema, answer.body);
    }
    return this.#answer(operationId, answer, answer);
  }

  /** Tells `onCall` what was answered, then answers. */
  #answer(operationId: Op, answer: { status: number; body: unknown }, extra: Partial<PipelineAnswer> = {}): Response {
    const merchant = extra.merchant === undefined ? undefined : this.#byUserId.get(extra.merchant);
    this.#options.onCall?.({
      operationId,
      scenario: this.#scenario,
      status: answer.status,
      body: answer.body,
      ...(merchant ? { userId: merchant.userId.toString() } : {}),
      ...(extra.plainText === undefined ? {} : { plainText: extra.plainText }),
      ...(extra.resultText === undefined ? {} : { resultText: extra.resultText }),
    });
    return toResponse(answer);
  }
}

/**
 * Each merchant's codec over its keys. Keys load in the background from creation on; a key the
 * codec refuses fails every answer that needs it with its ConfigError.
 */
function merchantCodecs(options: WalletMockOptions<string>, merchants: ResolvedMerchant[]): PipelineCodec[] {
  const crypto: Promise<MerchantCrypto[]> = (options.codec ? Promise.resolve(options.codec) : loadNodeCodec()).then(
    (codec) =>
      Promise.all(
        merchants.map((merchant) =>
          codec.forMerchant(
            merchant.privateKey,
            merchant.profile,
            `${OPTIONS_SOURCE}: merchants[${merchant.index}].privateKey`,
          ),
        ),
      ),
  );
  crypto.catch(() => undefined);
  return merchants.map((merchant): PipelineCodec => ({
    open: async (data, accept) => (await crypto)[merchant.index]!.open(data, accept),
    seal: async (json) => (await crypto)[merchant.index]!.seal(json),
  }));
}

/** ERR-401 / ERR-403: the key names its merchant, the merchant's permissions the operations it may call; the scenario may override both. */
function merchantKeys(merchants: ResolvedMerchant[], scenario: WalletScenario): PipelineKeys<ResolvedMerchant> {
  const byKey = new Map(merchants.map((merchant) => [merchant.apiKey, merchant]));
  return scenarioKeys<ResolvedMerchant>(
    {
      check(header, operation) {
        const merchant = typeof header === 'string' && header !== '' ? byKey.get(header) : undefined;
        if (!merchant) return { ok: false, status: 401, why: 'unknown X-API-KEY' };
        if (merchant.permissions && !merchant.permissions.has(operation))
          return { ok: false, status: 403, why: `X-API-KEY lacks the ${operation} permission` };
        return { ok: true, merchant };
      },
    },
    scenario,
  );
}

/** The handlers answer only what the spec allows: a result that breaks its schema is a bug here, not a finding. */
function selfCheck(operationId: string, schema: WalletEndpoint['response']['schema'], value: unknown): void {
  const issues = validateSchema(schema, value);
  if (issues.length > 0)
    throw new Error(
      `${OPTIONS_SOURCE}: the ${operationId} answer breaks ${schema}: ${issues.map((issue) => issue.message).join('; ')}`,
    );
}

/** An operation of the table the service has no logic for answers its spec example. */
function exampleOperation(endpoint: WalletEndpoint | undefined): PipelineOperation<ResolvedMerchant> | undefined {
  if (!endpoint) return undefined;
  return () => ({ ok: true, result: endpoint.response.example }) as ReturnType<PipelineOperation<ResolvedMerchant>>;
}
