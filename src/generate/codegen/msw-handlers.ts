import { SpecError } from '../../core/errors.js';
import { stringifyExact } from '../../core/exact-json.js';
import type { WalletEndpoint } from '../../msw/types.js';
import { followLocalRef, isNode, rulesOf, type Node, type SpecSource } from '../../spec/document.js';
import { specModel, type SpecModel } from '../../spec/model.js';
import type { GeneratedFile } from '../generated-file.js';

/** Where the generated handlers go, relative to the package root. */
const MSW_HANDLERS_PATH = 'src/generated/msw-handlers.ts';

/** An endpoint row as the generator builds it: schema names are whatever the spec has. */
type EndpointRow = WalletEndpoint<string>;

type Json = Node;
const isJson = isNode;

/** Reads the spec model for the handlers; every gap is a SpecError naming the operation. */
class SpecReader {
  constructor(private readonly model: SpecModel) {}

  fail(where: string, what: string): never {
    throw new SpecError('bad-spec', `${this.model.name}: ${where}: ${what} (needed by the MSW handlers)`);
  }

  /** Follows `$ref` chains inside the document. */
  deref(node: unknown, where: string): Json {
    let current = node;
    for (let hops = 0; isJson(current) && typeof current.$ref === 'string'; hops++) {
      if (hops > 20 || !current.$ref.startsWith('#/')) this.fail(where, `cannot follow $ref ${current.$ref}`);
      const target = followLocalRef(this.model.document, current.$ref);
      if (target === undefined) this.fail(where, `$ref ${current.$ref} points nowhere`);
      current = target;
    }
    if (!isJson(current)) this.fail(where, 'expected an object');
    return current;
  }

  /** The component schema name of a `$ref: '#/components/schemas/X'`. */
  schemaName(node: unknown, where: string): string {
    const ref = isJson(node) ? node.$ref : undefined;
    const match = typeof ref === 'string' ? /^#\/components\/schemas\/([^/]+)$/.exec(ref) : null;
    if (!match) this.fail(where, 'the schema must be a $ref to a component schema (the validators are generated per component)');
    return match[1]!;
  }

  /** A schema's properties, those of its `allOf` members first (the spec composes envelopes that way). */
  properties(schema: Json, where: string): Record<string, Json> {
    const merged: Record<string, Json> = {};
    for (const member of Array.isArray(schema.allOf) ? schema.allOf : []) Object.assign(merged, this.properties(this.deref(member, where), where));
    for (const [name, property] of Object.entries(isJson(schema.properties) ? schema.properties : {})) {
      merged[name] = { ...merged[name], ...(property as Json) };
    }
    return merged;
  }

  /** The form field marked `x-encrypted` for `direction`, if any. */
  encrypted(schema: Json, direction: string, where: string): { field: string; property: Json; plaintext: string } | null {
    for (const [field, property] of Object.entries(this.properties(schema, where))) {
      const marker = property['x-encrypted'];
      if (isJson(marker) && marker.direction === direction) return { field, property, plaintext: this.schemaName(marker.plaintext, `${where} ${field} x-encrypted`) };
    }
    return null;
  }
}

function serverVariable(reader: SpecReader, servers: unknown, where: string): string {
  const url = Array.isArray(servers) && isJson(servers[0]) ? servers[0].url : undefined;
  const match = typeof url === 'string' ? /^\{([A-Za-z0-9_]+)\}$/.exec(url) : null;
  if (!match) reader.fail(where, `the server URL must be one variable such as {base_url}, not ${JSON.stringify(url)}`);
  return match[1]!;
}

function apiKeyOf(reader: SpecReader, model: SpecModel, requirements: unknown[], parameters: unknown[], where: string): { header: string | null; rules: string[] } {
  const components = isJson(model.document.components) ? model.document.components : {};
  const schemes = isJson(components.securitySchemes) ? components.securitySchemes : {};
  for (const requirement of requirements) {
    for (const name of Object.keys(isJson(requirement) ? requirement : {})) {
      const scheme = reader.deref(schemes[name], `${where} security ${name}`);
      if (scheme.type !== 'apiKey' || scheme.in !== 'header' || typeof scheme.name !== 'string') continue;
      const header = scheme.name;
      const parameter = parameters.map((p) => reader.deref(p, `${where} parameters`)).find((p) => p.in === 'header' && String(p.name).toLowerCase() === header.toLowerCase());
      return { header, rules: [...new Set([...rulesOf(parameter), ...rulesOf(scheme)])] };
    }
  }
  return { header: null, rules: [] };
}

function errorBodies(reader: SpecReader, responses: Json, where: string): Record<string, { code: string; message: string }> {
  const errors: Record<string, { code: string; message: string }> = {};
  for (const [status, ref] of Object.entries(responses)) {
    if (!/^[45]\d\d$/.test(status)) continue;
    const response = reader.deref(ref, `${where} ${status}`);
    const media = isJson(response.content) ? response.content['application/json'] : undefined;
    if (!isJson(media)) continue;
    const schema = reader.deref(media.schema, `${where} ${status}`);
    const properties = reader.properties(schema, `${where} ${status}`);
    const example = Array.isArray(schema.examples) && isJson(schema.examples[0]) ? schema.examples[0] : {};
    const code = properties.code?.const ?? example.code;
    const message = properties.message?.const ?? example.message;
    if (typeof code === 'string' && typeof message === 'string') errors[status] = { code, message };
  }
  return errors;
}

/**
 * The endpoint table of the service, from the spec: every operation but the control API's, with
 * its server variable, media type, encrypted field and plain schemas, error bodies and rule ids.
 */
export function mswEndpointTable(spec: SpecSource): EndpointRow[] {
  const model = specModel(spec);
  const reader: SpecReader = new SpecReader(model);
  const rows: EndpointRow[] = [];
  for (const { method, path, node: operation, control, servers, parameters, security } of model.operations()) {
    if (control) continue;
    const where = `${method.toUpperCase()} ${path}`;
    if (typeof operation.operationId !== 'string') reader.fail(where, 'no operationId');
    const server = serverVariable(reader, servers, where);
    const apiKey = apiKeyOf(reader, model, security, parameters, where);
    const body = reader.deref(operation.requestBody, `${where} requestBody`);
    const [mediaType, media] = Object.entries(isJson(body.content) ? body.content : {})[0] ?? reader.fail(where, 'the request body has no media type');
    const requestSchema = reader.schemaName((media as Json).schema, `${where} requestBody`);
    const requestEncrypted = reader.encrypted(reader.deref((media as Json).schema, where), 'request', where);
    const plainName = requestEncrypted?.plaintext ?? requestSchema;
    const plain = reader.deref({ $ref: `#/components/schemas/${plainName}` }, where);
    const plainProperties = reader.properties(plain, `${where} ${plainName}`);
    const responses = reader.deref(operation.responses, `${where} responses`);
    const ok = reader.deref(responses['200'], `${where} 200`);
    const okMedia = isJson(ok.content) ? ok.content['application/json'] : undefined;
    if (!isJson(okMedia)) reader.fail(`${where} 200`, 'no application/json content');
    const responseSchema = reader.schemaName(okMedia.schema, `${where} 200`);
    const responseEncrypted = reader.encrypted(reader.deref(okMedia.schema, where), 'response', `${where} 200`);
    const resultSchema = reader.deref({ $ref: `#/components/schemas/${responseEncrypted?.plaintext ?? responseSchema}` }, where);
    const pattern = requestEncrypted ? (requestEncrypted.property.pattern ?? reader.deref(requestEncrypted.property, where).pattern) : undefined;
    if (requestEncrypted && typeof pattern !== 'string') reader.fail(where, `the encrypted field ${requestEncrypted.field} has no pattern`);
    rows.push({
      operationId: operation.operationId,
      method,
      path,
      server,
      apiKeyHeader: apiKey.header,
      request: {
        mediaType: mediaType.toLowerCase(),
        schema: requestSchema,
        encrypted: requestEncrypted ? { field: requestEncrypted.field, pattern: pattern as string, plaintext: requestEncrypted.plaintext } : null,
        constants: Object.fromEntries(Object.entries(plainProperties).filter(([, p]) => 'const' in p).map(([name, p]) => [name, p.const])),
        stringFields: Object.entries(plainProperties).filter(([, p]) => p.type === 'string').map(([name]) => name),
      },
      response: {
        schema: responseSchema,
        encrypted: responseEncrypted ? { field: responseEncrypted.field, plaintext: responseEncrypted.plaintext } : null,
        example: Array.isArray(resultSchema.examples) ? (resultSchema.examples[0] ?? null) : null,
      },
      errors: errorBodies(reader, responses, where),
      rules: {
        operation: rulesOf(operation),
        apiKey: apiKey.rules,
        contentType: rulesOf(media),
        data: rulesOf(requestEncrypted?.property),
        request: rulesOf(plain),
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
