import { SpecError } from '../../core/errors.js';
import { stringifyExact } from '../../core/exact-json.js';
import type { WalletEndpoint } from '../../msw/types.js';
import { isNode, type SpecSource } from '../../spec/document.js';
import type { SpecEndpoint, SpecMedia } from '../../spec/endpoints.js';
import { encryptedField } from '../../spec/flatten.js';
import { specModel, type SpecModel } from '../../spec/model.js';
import type { GeneratedFile } from '../generated-file.js';

/** Where the generated handlers go, relative to the package root. */
const MSW_HANDLERS_PATH = 'src/generated/msw-handlers.ts';

/** An endpoint row as the generator builds it: schema names are whatever the spec has. */
type EndpointRow = WalletEndpoint<string>;

type Fail = (where: string, what: string) => never;

/** Every gap in the spec is a SpecError naming the spec and the operation. */
function failer(model: SpecModel): Fail {
  return (where, what) => {
    throw new SpecError('bad-spec', `${model.name}: ${where}: ${what} (needed by the MSW handlers)`);
  };
}

/** A media type's schema must be a `$ref` to a component (the validators are generated per component). */
function componentOf(media: SpecMedia, where: string, fail: Fail): string {
  if (!media.schemaIsComponent || media.schema.name === undefined)
    fail(where, 'the schema must be a $ref to a component schema (the validators are generated per component)');
  return media.schema.name;
}

function serverVariable(endpoint: SpecEndpoint, where: string, fail: Fail): string {
  const url = endpoint.servers[0]?.url;
  const match = typeof url === 'string' ? /^\{([A-Za-z0-9_]+)\}$/.exec(url) : null;
  if (!match) fail(where, `the server URL must be one variable such as {base_url}, not ${JSON.stringify(url)}`);
  return match[1]!;
}

function errorBodies(endpoint: SpecEndpoint): Record<string, { code: string; message: string }> {
  const errors: Record<string, { code: string; message: string }> = {};
  for (const response of endpoint.responses) {
    if (!/^[45]\d\d$/.test(response.status)) continue;
    const schema = response.media.find((media) => media.mediaType === 'application/json')?.schema;
    if (!schema) continue;
    const example = isNode(schema.examples[0]) ? schema.examples[0] : {};
    const code = schema.properties.code?.const ?? example.code;
    const message = schema.properties.message?.const ?? example.message;
    if (typeof code === 'string' && typeof message === 'string') errors[response.status] = { code, message };
  }
  return errors;
}

/** The endpoint views of the model, with a dangling `$ref` worded for the MSW handlers. */
function serviceEndpoints(model: SpecModel, fail: Fail): SpecEndpoint[] {
  try {
    return model.serviceEndpoints();
  } catch (error) {
    if (!(error instanceof SpecError)) throw error;
    const [where, ...what] = error.message.split(': ');
    return fail(where!, what.join(': '));
  }
}

/**
 * The endpoint table of the service, from the spec model: every operation but the control API's,
 * with its server variable, media type, encrypted field and plain schemas, error bodies and rule ids.
 */
export function mswEndpointTable(spec: SpecSource): EndpointRow[] {
  const model = specModel(spec);
  const fail: Fail = failer(model);
  const rows: EndpointRow[] = [];
  for (const endpoint of serviceEndpoints(model, fail)) {
    const { method, path } = endpoint;
    const where = `${method.toUpperCase()} ${path}`;
    if (endpoint.operationId === undefined) fail(where, 'no operationId');
    const server = serverVariable(endpoint, where, fail);
    const media = endpoint.requestBody?.media[0] ?? fail(where, 'the request body has no media type');
    const requestSchema = componentOf(media, `${where} requestBody`, fail);
    const requestEncrypted =
      media.encrypted?.marker.direction === 'request' && media.encrypted.field !== undefined
        ? media.encrypted
        : undefined;
    if (requestEncrypted && requestEncrypted.marker.plaintext === undefined)
      fail(
        `${where} ${requestEncrypted.field} x-encrypted`,
        'the schema must be a $ref to a component schema (the validators are generated per component)',
      );
    const plainName = requestEncrypted?.marker.plaintext ?? requestSchema;
    const plain = model.flatten(plainName);
    const okMedia = endpoint.responses
      .find((response) => response.status === '200')
      ?.media.find((candidate) => candidate.mediaType === 'application/json');
    if (!okMedia) fail(`${where} 200`, 'no application/json content');
    const responseSchema = componentOf(okMedia, `${where} 200`, fail);
    const responseField = encryptedField(okMedia.schema, 'response');
    if (responseField && responseField.marker.plaintext === undefined)
      fail(
        `${where} 200 ${responseField.field} x-encrypted`,
        'the schema must be a $ref to a component schema (the validators are generated per component)',
      );
    const responseEncrypted = responseField
      ? { field: responseField.field, plaintext: responseField.marker.plaintext! }
      : null;
    const result = model.flatten(responseEncrypted?.plaintext ?? responseSchema);
    const pattern = requestEncrypted?.schema.pattern;
    if (requestEncrypted && typeof pattern !== 'string')
      fail(where, `the encrypted field ${requestEncrypted.field} has no pattern`);
    rows.push({
      operationId: endpoint.operationId,
      method,
      path,
      server,
      apiKeyHeader: endpoint.apiKey?.header ?? null,
      request: {
        mediaType: media.mediaType.toLowerCase(),
        schema: requestSchema,
        encrypted: requestEncrypted
          ? { field: requestEncrypted.field!, pattern: pattern!, plaintext: requestEncrypted.marker.plaintext! }
          : null,
        constants: Object.fromEntries(
          Object.entries(plain.properties)
            .filter(([, p]) => 'const' in p)
            .map(([name, p]) => [name, p.const!]),
        ),
        stringFields: Object.entries(plain.properties)
          .filter(([, p]) => p.type === 'string')
          .map(([name]) => name),
      },
      response: {
        schema: responseSchema,
        encrypted: responseEncrypted,
        example: result.examples[0] ?? null,
      },
      errors: errorBodies(endpoint),
      rules: {
        operation: endpoint.rules,
        apiKey: endpoint.apiKey?.rules ?? [],
        contentType: media.rules,
        data: requestEncrypted?.schema.site.rules ?? [],
        request: plain.ownRules,
      },
    });
  }
  return rows;
}

/**
 * Generates src/generated/msw-handlers.ts: the endpoint table as data and `createWalletHandlers`,
 * one msw `http.*` handler per endpoint plus the ERR-404 catch-all, bound to the runtime in src/msw.
 */
export function generateMswHandlers(spec: SpecSource): GeneratedFile[] {
  const rows = mswEndpointTable(spec);
  const handlers = rows.map((row) => {
    const id = JSON.stringify(row.operationId);
    return `    http.${row.method}(mock.url(${id}), ({ request }) => mock.serve(${id}, request)),`;
  });
  const contents = `/* eslint-disable */
// GENERATED by \`npm run generate\` from ${spec.name} (sha256 ${spec.sha256}).
// Do not edit: change the spec and regenerate. A test fails when this file is stale.
import { http, type HttpHandler } from 'msw';
import type { WalletEndpoint, WalletMockMerchant, WalletMockOptions } from '../msw/types.js';
import { createWalletMock } from '../msw/wallet-mock.js';

export { WALLET_SCENARIOS, type WalletScenario } from '../msw/scenarios.js';
export { createWalletMock, type WalletMock } from '../msw/wallet-mock.js';
export type { MerchantCrypto, OpenOutcome, WalletCall, WalletCodec, WalletEndpoint } from '../msw/types.js';

/** sha256 of the spec text these handlers were generated from. */
export const SPEC_SHA256 = ${JSON.stringify(spec.sha256)};

/** The service's endpoints as the spec describes them (the control API excluded). */
export const WALLET_ENDPOINTS = ${stringifyExact(rows, 2)} as const satisfies readonly WalletEndpoint[];

/** An operationId of the spec: what a merchant's \`permissions\` list. */
export type WalletOperationId = (typeof WALLET_ENDPOINTS)[number]['operationId'];

/** A merchant the handlers know (see WalletMockMerchant). */
export type WalletMerchant = WalletMockMerchant<WalletOperationId>;

/** Options of {@link createWalletHandlers}. */
export type WalletHandlersOptions = WalletMockOptions<WalletOperationId>;

/**
 * msw handlers playing the wallet service: they check X-API-KEY, Content-Type and \`data\`, decrypt
 * with the merchant's private key per profile, validate against the spec, and answer encrypted
 * envelopes, failures naming the rule broken, or the scenario asked for. Any other path under the
 * base URLs gets ERR-404. Works with setupServer (msw/node); setupWorker (msw/browser) needs \`codec\`.
 *
 * @example
 * const server = setupServer(...createWalletHandlers({
 *   baseUrl: 'http://wallet.test',
 *   merchants: [{ userId: 10086, apiKey: 'ak_test', privateKey: privatePem, energy: { balance: 20_000_000n, costPerTx: 64_000n } }],
 * }));
 */
export function createWalletHandlers(options: WalletHandlersOptions): HttpHandler[] {
  const mock = createWalletMock(WALLET_ENDPOINTS, options);
  return [
${handlers.join('\n')}
    ...mock.fallbackUrls.map((url) => http.all(url, ({ request }) => mock.notFound(request))),
  ];
}
`;
  return [{ path: MSW_HANDLERS_PATH, contents }];
}
