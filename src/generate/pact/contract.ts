import { MatchersV3 } from '@pact-foundation/pact';
import { SpecError } from '../../core/errors.js';
import { LosslessNumber, stringifyExact, type ExactJson } from '../../core/exact-json.js';
import type { SchemaName } from '../../core/schemas.js';
import { CALLBACK_TYPE_TABLE, callbackTypeEntry, type CallbackTypeTable } from '../../spec/callback-types.js';
import type { SpecSource } from '../../spec/document.js';
import type { SpecEndpoint, SpecMedia, SpecParameter } from '../../spec/endpoints.js';
import { specModel } from '../../spec/model.js';

/**
 * The Pact contract of the interface as data, derived from the spec's examples: the HTTP
 * interactions of the merchant (consumer) with the wallet service (provider) and the callback
 * messages the service sends the merchant. `pact-files.ts` turns it into Pact V4 files with
 * pact-js; `pact-verifier.ts` uses the same model to set up provider states and to encrypt the
 * plain example of each interaction, so both sides read one source.
 */

/** Consumer name in every pact file: the merchant's integration. */
export const PACT_CONSUMER = 'wallet-merchant';
/** Provider of the HTTP pact: the order endpoints and card close. */
export const PACT_PROVIDER = 'wallet-service';
/** Provider of the message pact: the callbacks the service sends to the merchant's URL. */
export const PACT_CALLBACK_PROVIDER = 'wallet-service-callbacks';
/** Where `npm run generate` writes the pact files (relative to the package root). */
export const PACT_DIR = 'spec/pacts';

/** File name of the pact between the merchant and `provider`, as Pact names it. */
export function pactFileName(provider: string): string {
  return `${PACT_CONSUMER}-${provider}.json`;
}

/** Standard Base64, padded, no line breaks (CRYPTO-ENVELOPE, ENERGY-DATA, ORDER-DATA). */
export const BASE64_REGEX = '^[A-Za-z0-9+/]+={0,2}$';
/** Any non-empty header value without blanks: the X-API-KEY is the merchant's own. */
export const API_KEY_REGEX = '^\\S+$';
/** The form media type, with or without parameters (Java clients add `; charset=UTF-8`). */
export const FORM_CONTENT_TYPE_REGEX = '^application/x-www-form-urlencoded(\\s*;.*)?$';
/** A BigDecimal as a JSON number or a decimal string (the spec's Decimal). */
const DECIMAL_REGEX = '^[+-]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][+-]?\\d+)?$';

/** What a provider state asks of the service; the verifier maps each kind to the control API. */
type StateKind =
  | 'key-valid'
  | 'key-unknown'
  | 'key-forbidden'
  | 'energy'
  | 'callback-id-unused'
  | 'card-open'
  | 'card-missing'
  | 'callback-event';

/** A provider state: its readable name (with the example's values) and the same values as params. */
export interface ProviderState {
  kind: StateKind;
  name: string;
  params: Record<string, string | number>;
}

/** Which credential the request carries; the verifier injects the real one. */
type ApiKeyRole = 'valid' | 'unknown' | 'forbidden';

/** One HTTP interaction: request, expected answer, provider states, plain forms. */
export interface PactHttpInteraction {
  /** Stable identifier (kebab-case), for tests and messages. */
  id: string;
  description: string;
  /** The spec's operation, none for a path outside the interface. */
  operationId?: string;
  states: ProviderState[];
  method: 'POST';
  path: string;
  /** `card` paths live under {card_base_url}, the rest under {base_url}. */
  base: 'base' | 'card';
  apiKey?: { role: ApiKeyRole; example: string };
  /** An encrypted form request: field `data`, its example and the plain JSON it stands for. */
  form?: { example: string; plain: ExactJson; plainSchema: SchemaName };
  /** A plain JSON request body (card close). */
  json?: Record<string, ExactJson>;
  response: {
    status: number;
    /** The body with pact-js matchers. */
    body: unknown;
    /** Schema of the decrypted envelope `data`, when there is one. */
    plainSchema?: SchemaName;
    plainExample?: ExactJson;
  };
  comments: string[];
}

/** One callback message: the plain payload (before encryption) with matchers. */
export interface PactMessageInteraction {
  id: string;
  type: number;
  description: string;
  states: ProviderState[];
  schema: SchemaName;
  /** The spec's example, exact. */
  plain: Record<string, ExactJson>;
  /** The same with pact-js matchers where deliveries differ. */
  content: Record<string, unknown>;
  comments: string[];
}

/** The whole contract. */
export interface PactContract {
  http: PactHttpInteraction[];
  messages: PactMessageInteraction[];
}

/**
 * The `index`-th example of a component schema as exact JSON (numbers keep their literal digits).
 *
 * @example exactExample(spec, 'OrderRequest', 0).amount // LosslessNumber '12345678901234567890.123'
 */
function exactExample(spec: SpecSource, schema: string, index = 0): ExactJson {
  return specModel(spec).example(schema, index, 'the Pact contract');
}

function exampleRecord(spec: SpecSource, schema: string, index = 0): Record<string, ExactJson> {
  const value = exactExample(spec, schema, index);
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof LosslessNumber) {
    throw new SpecError('bad-example', `${spec.name}: example ${index} of ${schema} is not an object`);
  }
  return value;
}

function exampleString(spec: SpecSource, schema: string, field: string): string {
  const value = exampleRecord(spec, schema)[field];
  if (typeof value !== 'string')
    throw new SpecError('bad-example', `${spec.name}: ${schema}.examples[0].${field} is not a string`);
  return value;
}

/** An operation of the spec by method and operationId; a SpecError naming the contract when there is none. */
function endpointOf(spec: SpecSource, operationId: string, method: 'post' | 'put' = 'post'): SpecEndpoint {
  const endpoint = specModel(spec)
    .endpoints()
    .find((candidate) => candidate.method === method && candidate.operationId === operationId);
  if (!endpoint)
    throw new SpecError(
      'missing-operation',
      `${spec.name}: no ${method.toUpperCase()} operation ${operationId}, which the Pact contract needs`,
    );
  return endpoint;
}

const needs = (spec: SpecSource, operationId: string, what: string): never => {
  throw new SpecError('bad-spec', `${spec.name}: ${operationId}: ${what}, which the Pact contract needs`);
};

/** The component schema of a media type. */
function schemaOf(spec: SpecSource, endpoint: SpecEndpoint, media: SpecMedia | undefined, what: string): string {
  return media?.schema.name ?? needs(spec, String(endpoint.operationId), `no component schema for ${what}`);
}

/** The request body's media type. */
function requestOf(endpoint: SpecEndpoint): SpecMedia | undefined {
  return endpoint.requestBody?.media[0];
}

/** A response's JSON media type. */
function responseOf(endpoint: SpecEndpoint, status: string): SpecMedia | undefined {
  return endpoint.responses
    .find((response) => response.status === status)
    ?.media.find((media) => media.mediaType === 'application/json');
}

/** An encrypted field: the form or envelope schema, the field and the plain schema it carries. */
function encryptedOf(
  spec: SpecSource,
  endpoint: SpecEndpoint,
  media: SpecMedia | undefined,
  what: string,
): { schema: string; field: string; plain: string } {
  const encrypted = media?.encrypted;
  if (!encrypted?.field || !encrypted.marker.plaintext)
    return needs(spec, String(endpoint.operationId), `no encrypted field with a plain schema in ${what}`);
  return { schema: schemaOf(spec, endpoint, media, what), field: encrypted.field, plain: encrypted.marker.plaintext };
}

/** The example of a parameter of an endpoint. */
function parameterExample(
  spec: SpecSource,
  endpoint: SpecEndpoint,
  matches: (parameter: SpecParameter) => boolean,
  what: string,
): ExactJson {
  const example = endpoint.parameters.find(matches)?.example;
  return example ?? needs(spec, String(endpoint.operationId), `no example of ${what}`);
}

/** The plain JSON text of an exact value, for comments. */
const text = (value: unknown): string => stringifyExact(value);

/** Plain data of a number (an exact integer param). */
function integer(value: ExactJson | undefined, what: string): number {
  const n = value instanceof LosslessNumber ? Number(value.value) : Number.NaN;
  if (!Number.isSafeInteger(n)) throw new SpecError('bad-example', `${what} is not a whole number`);
  return n;
}

/** Provider states of the HTTP pact, named with the example's values so a broker shows them plainly. */
const states = {
  keyValid: (userId: number): ProviderState => ({
    kind: 'key-valid',
    name: `merchant ${userId} holds a valid X-API-KEY`,
    params: { userId },
  }),
  keyUnknown: (): ProviderState => ({
    kind: 'key-unknown',
    name: 'the X-API-KEY is unknown to the service',
    params: {},
  }),
  keyForbidden: (userId: number, permission: string): ProviderState => ({
    kind: 'key-forbidden',
    name: `the X-API-KEY of merchant ${userId} lacks the ${permission} permission`,
    params: { userId, permission },
  }),
  energy: (userId: number, balance: number, costPerTx: number): ProviderState => ({
    kind: 'energy',
    name: `merchant ${userId} has energy ${balance} at ${costPerTx} per transaction`,
    params: { userId, balance, costPerTx },
  }),
  callBackIdUnused: (userId: number, callBackId: string): ProviderState => ({
    kind: 'callback-id-unused',
    name: `merchant ${userId} has not used callBackId ${callBackId}`,
    params: { userId, callBackId },
  }),
  cardOpen: (userId: number, powerCardId: string, merchantUserId: string): ProviderState => ({
    kind: 'card-open',
    name: `card ${powerCardId} of user ${merchantUserId} of merchant ${userId} is open`,
    params: { userId, powerCardId, merchantUserId },
  }),
  cardMissing: (userId: number, powerCardId: string): ProviderState => ({
    kind: 'card-missing',
    name: `merchant ${userId} has no card ${powerCardId}`,
    params: { userId, powerCardId },
  }),
  callbackEvent: (userId: number, type: number, title: string): ProviderState => ({
    kind: 'callback-event',
    name: `the service has a ${title} event (callback type ${type}) for merchant ${userId}`,
    params: { userId, type },
  }),
};

const { like, regex } = MatchersV3;

/** The success envelope: code 0, message "", data Base64 (ENV-CODE, ENV-MSG, ENV-DATA). */
function successEnvelope(example: string): unknown {
  return { code: 0, message: '', data: regex(BASE64_REGEX, example) };
}

/** The HTTP error bodies are fixed texts (ERR-401, ERR-403, ERR-404): matched exactly. */
function errorBody(spec: SpecSource, schema: string): unknown {
  return exampleRecord(spec, schema);
}

/** Every field of a card close body is a string the merchant chooses (CARD-REQ): matched by type. */
function cardResponse(example: Record<string, ExactJson>): unknown {
  const data = example.data;
  const success = example.success === true;
  return {
    success: example.success ?? false,
    // CARD-RES: errorCode is empty on success; CARD-ERR: a failure fills it (codes are U-CODES).
    errorCode: success ? '' : regex('^\\S.*$', String(example.errorCode)),
    errorMessage: like(example.errorMessage ?? ''),
    errorMessageEn: like(example.errorMessageEn ?? ''),
    detailMessage: like(example.detailMessage ?? ''),
    requestId: like(example.requestId ?? ''),
    // A failure's data is left out: the interface does not say whether it is null, {} or absent,
    // and Pact accepts keys the contract does not name.
    ...(data && typeof data === 'object' && !Array.isArray(data) && !(data instanceof LosslessNumber)
      ? { data: Object.fromEntries(Object.entries(data).map(([key, value]) => [key, like(value as string)])) }
      : {}),
  };
}

/** Fields that differ between deliveries or events; the rest is the example, exactly. */
const VARYING_CALLBACK_FIELDS = ['requestUUID', 'trackingId', 'txid'];

/** The callback schemas by type, from the spec's webhooks (CallbackPayload's `if type const N then $ref`). */
function callbackSchemas(spec: SpecSource): Array<{ type: number; schema: string }> {
  const out = specModel(spec)
    .callbackTypes()
    .map(({ type, schema }) => ({ type, schema }));
  if (out.length === 0)
    throw new SpecError('missing-callbacks', `${spec.name}: CallbackPayload maps no callback type to a schema`);
  return out;
}

function messageContent(plain: Record<string, ExactJson>): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(plain)) {
    if (VARYING_CALLBACK_FIELDS.includes(field)) content[field] = like(value as string);
    // Pact's core reads JSON numbers as 64-bit floats: an exact BigDecimal is written as its decimal
    // string and matched by the Decimal pattern, which a number or a string satisfies (ORDER-FIELDS).
    else if (field === 'amount')
      content[field] = regex(DECIMAL_REGEX, value instanceof LosslessNumber ? value.value : String(value));
    else content[field] = value instanceof LosslessNumber ? Number(value.value) : value;
  }
  return content;
}

/** The examples and schema names the HTTP interactions are built from, read from the endpoints' views. */
interface HttpExamples {
  userId: number;
  valid: { role: 'valid'; example: string };
  energyPath: string;
  orderPath: string;
  cardPath: string;
  energyData: string;
  orderData: string;
  energyPlainSchema: SchemaName;
  orderPlainSchema: SchemaName;
  energyPlain: Record<string, ExactJson>;
  withdrawal: Record<string, ExactJson>;
  lease: Record<string, ExactJson>;
  balance: number;
  costPerTx: number;
  energyOk: { schema: string; field: string; plain: string };
  orderOk: { schema: string; field: string; plain: string };
  energyResult: Record<string, ExactJson>;
  orderResult: Record<string, ExactJson>;
  energyEnvelope: string;
  orderEnvelope: string;
  cardRequest: Record<string, ExactJson>;
  cardSuccess: Record<string, ExactJson>;
  cardFailure: Record<string, ExactJson>;
  errorSchema: (status: string) => string;
}

/**
 * Every schema name comes from the endpoints' views: the form, the plain request, the envelope and
 * the plain result of each encrypted endpoint, the card close bodies, the error bodies.
 */
function readHttpExamples(spec: SpecSource): HttpExamples {
  const energyEndpoint = endpointOf(spec, 'getEnergyMaxCount');
  const orderEndpoint = endpointOf(spec, 'withdrawWithoutVerify');
  const cardEndpoint = endpointOf(spec, 'closeCard');
  const controlEnergy = endpointOf(spec, 'controlSetEnergy', 'put');
  const energyForm = encryptedOf(spec, energyEndpoint, requestOf(energyEndpoint), 'the request body');
  const orderForm = encryptedOf(spec, orderEndpoint, requestOf(orderEndpoint), 'the request body');
  const energyOk = encryptedOf(spec, energyEndpoint, responseOf(energyEndpoint, '200'), 'the 200 response');
  const orderOk = encryptedOf(spec, orderEndpoint, responseOf(orderEndpoint, '200'), 'the 200 response');
  const cardRequestSchema = schemaOf(spec, cardEndpoint, requestOf(cardEndpoint), 'the request body');
  const cardResponseSchema = schemaOf(spec, cardEndpoint, responseOf(cardEndpoint, '200'), 'the 200 response');
  const energySchema = schemaOf(spec, controlEnergy, requestOf(controlEnergy), 'the request body');
  const keyHeader = energyEndpoint.apiKey?.header.toLowerCase();
  const apiKey = String(
    parameterExample(
      spec,
      energyEndpoint,
      (parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === keyHeader,
      'the API key header',
    ),
  );
  const userId = Number(
    parameterExample(
      spec,
      controlEnergy,
      (parameter) => parameter.in === 'path' && parameter.name === 'userId',
      'the userId path parameter',
    ),
  );
  const energyData = exampleString(spec, energyForm.schema, energyForm.field);
  const orderData = exampleString(spec, orderForm.schema, orderForm.field);
  const energyPlainSchema = energyForm.plain as SchemaName;
  const orderPlainSchema = orderForm.plain as SchemaName;
  const energyPlain = exampleRecord(spec, energyPlainSchema);
  const withdrawal = exampleRecord(spec, orderPlainSchema, 0);
  const lease = exampleRecord(spec, orderPlainSchema, 1);
  const energy = exampleRecord(spec, energySchema);
  return {
    userId,
    valid: { role: 'valid', example: apiKey },
    energyPath: energyEndpoint.path,
    orderPath: orderEndpoint.path,
    cardPath: cardEndpoint.path,
    energyData,
    orderData,
    energyPlainSchema,
    orderPlainSchema,
    energyPlain,
    withdrawal,
    lease,
    balance: integer(energy.balance, `${energySchema}.balance`),
    costPerTx: integer(energy.costPerTx, `${energySchema}.costPerTx`),
    energyOk,
    orderOk,
    energyResult: exampleRecord(spec, energyOk.plain),
    orderResult: exampleRecord(spec, orderOk.plain),
    energyEnvelope: exampleString(spec, energyOk.schema, energyOk.field),
    orderEnvelope: exampleString(spec, orderOk.schema, orderOk.field),
    cardRequest: exampleRecord(spec, cardRequestSchema),
    cardSuccess: exampleRecord(spec, cardResponseSchema, 0),
    cardFailure: exampleRecord(spec, cardResponseSchema, 1),
    errorSchema: (status) =>
      schemaOf(spec, energyEndpoint, responseOf(energyEndpoint, status), `the ${status} response`),
  };
}

/** The comments of an encrypted interaction: how data is sealed, the plain request and the plain result. */
function encryptedComments(
  plain: Record<string, ExactJson>,
  plainSchema: SchemaName,
  result: Record<string, ExactJson>,
  resultSchema: string,
): string[] {
  return [
    'data is the Base64 text of the RSA-encrypted JSON (crypto profile; by default requests are encrypted with the merchant public key).',
    `plain request data: ${text(plain)} (${plainSchema})`,
    `the envelope data decrypts to ${resultSchema}, e.g. ${text(result)}`,
  ];
}

/** The energy query and the two orders (withdrawal, energy lease), each with a valid key. */
function orderInteractions(examples: HttpExamples): PactHttpInteraction[] {
  const {
    userId,
    valid,
    energyPlain,
    energyPlainSchema,
    withdrawal,
    lease,
    orderPlainSchema,
    energyOk,
    orderOk,
    energyResult,
    orderResult,
  } = examples;
  const energyState = states.energy(userId, examples.balance, examples.costPerTx);
  const leaseResult = { ...orderResult, id: lease.callBackId ?? '' };
  const orderRequest = {
    method: 'POST',
    path: examples.orderPath,
    base: 'base',
    apiKey: valid,
    operationId: 'withdrawWithoutVerify',
  } as const;
  const orderResponse = {
    status: 200,
    body: successEnvelope(examples.orderEnvelope),
    plainSchema: orderOk.plain as SchemaName,
  };
  return [
    {
      id: 'energy-query',
      description: 'an energy capacity query (getEnergyMaxCount)',
      operationId: 'getEnergyMaxCount',
      states: [states.keyValid(userId), energyState],
      method: 'POST',
      path: examples.energyPath,
      base: 'base',
      apiKey: valid,
      form: { example: examples.energyData, plain: energyPlain, plainSchema: energyPlainSchema },
      response: {
        status: 200,
        body: successEnvelope(examples.energyEnvelope),
        plainSchema: energyOk.plain as SchemaName,
        plainExample: energyResult,
      },
      comments: [
        ...encryptedComments(energyPlain, energyPlainSchema, energyResult, energyOk.plain),
        'energyMaxCount = floor(balance / costPerTx) (ENERGY-FLOOR).',
      ],
    },
    {
      id: 'withdrawal-order',
      description: 'a withdrawal order (withdrawWithoutVerify)',
      ...orderRequest,
      states: [states.keyValid(userId), states.callBackIdUnused(userId, String(withdrawal.callBackId))],
      form: { example: examples.orderData, plain: withdrawal, plainSchema: orderPlainSchema },
      response: { ...orderResponse, plainExample: orderResult },
      comments: [
        ...encryptedComments(withdrawal, orderPlainSchema, orderResult, orderOk.plain),
        'The result echoes callBackId as id (ORDER-RES); a withdrawal callback (type 3) follows.',
      ],
    },
    {
      id: 'energy-lease-order',
      description: 'an energy lease order (withdrawWithoutVerify, symbol ENERGY)',
      ...orderRequest,
      states: [states.keyValid(userId), energyState, states.callBackIdUnused(userId, String(lease.callBackId))],
      form: { example: examples.orderData, plain: lease, plainSchema: orderPlainSchema },
      response: { ...orderResponse, plainExample: leaseResult },
      comments: [
        ...encryptedComments(lease, orderPlainSchema, leaseResult, orderOk.plain),
        'amount is the number of transactions and expiryHours is required (ORDER-ENERGY-AMOUNT, ORDER-EXPIRY).',
      ],
    },
  ];
}

/** Card close, a success and a failure: plain JSON under {card_base_url}, no credential. */
function cardInteractions(examples: HttpExamples): PactHttpInteraction[] {
  const { userId, cardRequest, cardFailure } = examples;
  const missingCard = String(cardFailure.detailMessage ?? '').match(/\bpc-[\w-]+/)?.[0] ?? 'pc-unknown';
  return [
    {
      id: 'card-close',
      description: 'closing an open card (card close)',
      operationId: 'closeCard',
      states: [states.cardOpen(userId, String(cardRequest.powerCardId), String(cardRequest.merchantUserId))],
      method: 'POST',
      path: examples.cardPath,
      base: 'card',
      json: cardRequest,
      response: { status: 200, body: cardResponse(examples.cardSuccess) },
      comments: [
        'Card close is plain JSON under {card_base_url} and carries no credential (U-CARD-AUTH).',
        'Success: success true, errorCode empty, data {bizId, status} (CARD-RES).',
      ],
    },
    {
      id: 'card-close-failure',
      description: 'closing a card that does not exist (card close failure)',
      operationId: 'closeCard',
      states: [states.cardMissing(userId, missingCard)],
      method: 'POST',
      path: examples.cardPath,
      base: 'card',
      json: { ...cardRequest, powerCardId: missingCard, closeSerialNo: `${String(cardRequest.closeSerialNo)}-f` },
      response: { status: 200, body: cardResponse(cardFailure) },
      comments: [
        "A failure is HTTP 200 with success false and every error field filled (CARD-ERR); the codes are the service's (U-CODES).",
      ],
    },
  ];
}

/** The fixed error answers: an unknown key (401), a key without the permission (403), an unknown path (404). */
function errorInteractions(spec: SpecSource, examples: HttpExamples): PactHttpInteraction[] {
  const { userId, energyPath, errorSchema } = examples;
  const form = { example: examples.energyData, plain: examples.energyPlain, plainSchema: examples.energyPlainSchema };
  return [
    {
      id: 'unauthorized',
      description: 'an energy capacity query with an unknown X-API-KEY (401)',
      operationId: 'getEnergyMaxCount',
      states: [states.keyUnknown()],
      method: 'POST',
      path: energyPath,
      base: 'base',
      apiKey: { role: 'unknown', example: 'ak_unknown_000000000000' },
      form,
      response: { status: 401, body: errorBody(spec, errorSchema('401')) },
      comments: ['A missing, unknown or expired key gets HTTP 401 with this exact body (ERR-401).'],
    },
    {
      id: 'forbidden',
      description: 'an energy capacity query with a key that lacks the permission (403)',
      operationId: 'getEnergyMaxCount',
      states: [states.keyForbidden(userId, 'getEnergyMaxCount')],
      method: 'POST',
      path: energyPath,
      base: 'base',
      apiKey: { role: 'forbidden', example: 'ak_forbidden_000000000000' },
      form: { ...form },
      response: { status: 403, body: errorBody(spec, errorSchema('403')) },
      comments: ['A valid key without the permission gets HTTP 403 with this exact body (ERR-403).'],
    },
    {
      id: 'not-found',
      description: 'a request to a path that does not exist (404)',
      states: [states.keyValid(userId)],
      method: 'POST',
      path: energyPath.replace(/[^/]+$/, 'getEnergyMaxCounts'),
      base: 'base',
      apiKey: examples.valid,
      form: { ...form },
      response: { status: 404, body: errorBody(spec, errorSchema('404')) },
      comments: ['Any other path gets HTTP 404 with this exact body (ERR-404).'],
    },
  ];
}

/** One message per callback type the spec maps to a schema, with the spec's example as payload. */
function callbackMessages(spec: SpecSource, table: CallbackTypeTable, userId: number): PactMessageInteraction[] {
  return callbackSchemas(spec).map(({ type, schema }): PactMessageInteraction => {
    const plain = exampleRecord(spec, schema);
    const title = callbackTypeEntry(type, table)?.name ?? `type ${type}`;
    return {
      id: `callback-${type}`,
      type,
      description: `callback type ${type} (${title})`,
      states: [states.callbackEvent(userId, type, title)],
      schema: schema as SchemaName,
      plain,
      content: messageContent(plain),
      comments: [
        `The plain ${schema} payload. On the wire: HTTP POST to the merchant callback URL with X-API-KEY, the raw body being the Base64 text of the RSA-encrypted JSON (CB-RAW-BODY, CB-DECRYPT).`,
        'requestUUID is new on every delivery, trackingId stable per event (CB-UUID); the merchant answers {"errCode": 0} (CB-ERRCODE).',
        ...(plain.amount instanceof LosslessNumber
          ? [
              `amount is the exact JSON number ${plain.amount.value} on the wire; Pact keeps it as a decimal string (64-bit floats would round it).`,
            ]
          : []),
      ],
    };
  });
}

/**
 * Builds the contract from the spec's examples: the encrypted requests carry the example
 * ciphertexts of the form schemas and name the plain examples they stand for.
 */
export function buildPactContract(spec: SpecSource, options: { callbackTypes?: CallbackTypeTable } = {}): PactContract {
  const examples = readHttpExamples(spec);
  const http = [...orderInteractions(examples), ...cardInteractions(examples), ...errorInteractions(spec, examples)];
  const messages = callbackMessages(spec, options.callbackTypes ?? CALLBACK_TYPE_TABLE, examples.userId);
  return { http, messages };
}
