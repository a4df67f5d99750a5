import { SpecError } from '../../core/errors.js';
import type { SpecSource } from '../../spec/document.js';
import type { FlatSchema } from '../../spec/flatten.js';
import { specModel, type SpecModel } from '../../spec/model.js';
import type { GeneratedFile } from '../generated-file.js';

/** Where the generated control-API client goes, relative to the package root. */
export const CONTROL_CLIENT_PATH = 'src/generated/control-client.ts';

/** One control operation as the client generator needs it: everything it reads of the spec model. */
interface ControlOperationView {
  operationId: string;
  method: 'GET' | 'PUT' | 'POST';
  path: string;
  summary: string;
  /** Path parameters, in the order the path names them. */
  pathParams: string[];
  /** Query parameters (the spec's order). */
  query: Array<{ name: string; required: boolean }>;
  /** The header of the operation's apiKey security scheme (X-Control-Token). */
  tokenHeader: string;
  /** The request body's schema (its first media type), when the operation takes one. */
  body?: FlatSchema;
  /** The schema of the 200 answer's JSON, when it has one. */
  answer?: FlatSchema;
}

function fail(model: SpecModel, where: string, what: string): never {
  throw new SpecError('bad-spec', `${model.name}: ${where}: ${what} (needed by the control-API client)`);
}

/**
 * What the generator reads of the spec model: the control operations' typed views
 * ({@link SpecModel.controlOperations}), each with its method, path, parameters, token header and
 * body/answer schemas (flattened).
 */
export function readControlOperations(model: SpecModel): ControlOperationView[] {
  return model.controlOperations().map((endpoint) => {
    const where = `${endpoint.method.toUpperCase()} ${endpoint.path}`;
    if (!endpoint.operationId)
      fail(model, where, 'a control operation needs an operationId (it names the client function)');
    const method = endpoint.method.toUpperCase();
    if (method !== 'GET' && method !== 'PUT' && method !== 'POST')
      fail(model, where, `method ${method} is not one the client sends`);
    const pathParams: string[] = [];
    const query: ControlOperationView['query'] = [];
    for (const parameter of endpoint.parameters) {
      if (parameter.in === 'path') pathParams.push(parameter.name);
      else if (parameter.in === 'query') query.push({ name: parameter.name, required: parameter.required });
      else fail(model, where, `parameter ${parameter.name} in ${parameter.in} is not supported`);
    }
    const named = [...endpoint.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
    if ([...named].sort().join() !== [...pathParams].sort().join())
      fail(
        model,
        where,
        `the path template names {${named.join('}, {')}} but the parameters are ${pathParams.join(', ') || 'none'}`,
      );
    const tokenHeader = endpoint.apiKey?.header;
    if (!tokenHeader) fail(model, where, 'a control operation needs an apiKey header security scheme');
    const body = endpoint.requestBody?.media[0]?.schema;
    const answer = endpoint.responses
      .find((response) => response.status === '200')
      ?.media.find((media) => media.mediaType === 'application/json')?.schema;
    return {
      operationId: endpoint.operationId,
      method,
      path: endpoint.path,
      summary: endpoint.summary ?? endpoint.operationId,
      pathParams: named,
      query,
      tokenHeader,
      ...(body ? { body } : {}),
      ...(answer ? { answer } : {}),
    };
  });
}

/** TypeScript types for the schemas the operations name (component schemas become interfaces, by their names). */
class TypeWriter {
  readonly declarations = new Map<string, string>();
  constructor(private readonly model: SpecModel) {}

  type(schema: FlatSchema | undefined, indent = ''): string {
    if (!schema) return 'unknown';
    const name = schema.name;
    if (name === undefined) return this.shape(schema, indent);
    if (!this.declarations.has(name)) {
      this.declarations.set(name, '');
      // The component as declared (a `$ref` site's own keywords, e.g. a property's description, are not its).
      const component = this.model.schemaNames().includes(name) ? this.model.flatten(name) : schema;
      const description =
        component.description !== undefined ? `/** ${component.description.trim().replace(/\s+/g, ' ')} */\n` : '';
      const shape = this.shape(component, '');
      this.declarations.set(
        name,
        shape.startsWith('{')
          ? `${description}export interface ${name} ${shape}`
          : `${description}export type ${name} = ${shape};`,
      );
    }
    return name;
  }

  /** The schema's own shape (not its component name). */
  private shape(schema: FlatSchema, indent: string): string {
    if (schema.const !== undefined) return JSON.stringify(String(schema.const));
    const types = Array.isArray(schema.type) ? schema.type : [schema.type ?? ''];
    const shapes = types.map((type) => {
      switch (type) {
        case 'null':
          return 'null';
        case 'string':
          return 'string';
        case 'boolean':
          return 'boolean';
        // Exact numbers: a LosslessNumber keeps its digits (amounts and balances may exceed a double).
        case 'integer':
        case 'number':
          return 'ControlNumber';
        case 'array':
          return `Array<${this.type(schema.items, indent)}>`;
        case 'object':
          return this.object(schema, indent);
        default:
          return 'unknown';
      }
    });
    return shapes.join(' | ');
  }

  private object(schema: FlatSchema, indent: string): string {
    if (Object.keys(schema.properties).length === 0) return 'Record<string, unknown>';
    const required = new Set(schema.required);
    const lines = Object.entries(schema.properties).map(([name, property]) => {
      const description =
        property.site.description !== undefined
          ? `${indent}  /** ${property.site.description.trim().replace(/\s+/g, ' ')} */\n`
          : '';
      return `${description}${indent}  ${/^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name)}${required.has(name) ? '' : '?'}: ${this.type(property, `${indent}  `)};`;
    });
    return `{\n${lines.join('\n')}\n${indent}}`;
  }
}

const upperFirst = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

function operationCode(operation: ControlOperationView, types: TypeWriter): string {
  const params = [
    ...operation.pathParams.map((name) => `${name}: ControlId`),
    ...operation.query.map((q) => `${q.name}${q.required ? '' : '?'}: string`),
  ];
  const paramsType = params.length ? `{ ${params.join('; ')} }` : 'Record<string, never>';
  const bodyType = operation.body ? types.type(operation.body) : undefined;
  const answerType = operation.answer ? types.type(operation.answer) : 'unknown';
  const answerName = `${upperFirst(operation.operationId)}Answer`;
  const pathCode =
    '`' +
    operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => `\${encodeURIComponent(String(params.${name}))}`) +
    '`';
  const queryCode = operation.query.length
    ? ` + query([${operation.query.map((q) => `[${JSON.stringify(q.name)}, params.${q.name}]`).join(', ')}])`
    : '';
  const signature = `client: ControlClient, params: ${paramsType}${bodyType ? `, body: ${bodyType}` : ''}`;
  const bodyArg = bodyType ? 'stringifyExact(body)' : 'undefined';
  return [
    `/** The answer type of ${operation.operationId} (its 200 schema). */`,
    `export type ${answerName} = ${answerType};`,
    '',
    `/** Builds ${operation.method} ${operation.path}: ${operation.summary}. */`,
    `export function ${operation.operationId}Request(${signature}): ControlRequest {`,
    `  return build(client, ${JSON.stringify(operation.method)}, ${pathCode}${queryCode}, ${bodyArg});`,
    '}',
    '',
    `/** ${operation.summary} (${operation.method} ${operation.path}), sent through \`client.send\`. */`,
    `export function ${operation.operationId}(${signature}): Promise<ControlAnswer<${answerName}>> {`,
    `  return sendControlRequest(client, ${operation.operationId}Request(client, params${bodyType ? ', body' : ''}));`,
    '}',
  ].join('\n');
}

/** The client's fixed types: the operation ids, the request and answer as sent and received, the sender. */
const CLIENT_TYPES = `export type ControlOperationId = keyof typeof CONTROL_OPERATIONS;

/** A number as the wire carries it: exact (LosslessNumber, bigint) or a plain number. */
export type ControlNumber = number | bigint | LosslessNumber;

/** A path parameter: written with String() and percent-encoded. */
export type ControlId = number | string;

/** A control request exactly as it goes on the wire (header names lowercase). */
export interface ControlRequest {
  method: 'GET' | 'PUT' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** The answer as the caller's sender received it. */
export interface ControlResponse {
  status: number;
  body: Uint8Array | string;
}

/** Where and how the client sends: the base URL (before /__control), the token, the sender. */
export interface ControlClient {
  baseUrl: string;
  token: string;
  send(request: ControlRequest): Promise<ControlResponse>;
}

/**
 * One answer: the request as sent, the status, the body's text, and the body read as exact JSON
 * (undefined when it is not JSON). \`json\` is not validated: \`T\` is what the spec promises for a
 * 200, which a target may not keep.
 */
export interface ControlAnswer<T> {
  request: ControlRequest;
  status: number;
  text: string;
  json: unknown;
  /** Phantom: the spec's type of a 200 answer. */
  readonly promised?: T;
}

`;

/** The client's fixed functions: the query string, the request builder, the probe request, the sender. */
const CLIENT_RUNTIME = `function query(entries: Array<[string, string | undefined]>): string {
  const present = entries.filter((entry): entry is [string, string] => entry[1] !== undefined);
  return present.length ? \`?\${present.map(([name, value]) => \`\${encodeURIComponent(name)}=\${encodeURIComponent(value)}\`).join('&')}\` : '';
}

/** The request: JSON headers when there is a body, then the token; \`text\` is the body as sent. */
function build(client: ControlClient, method: ControlRequest['method'], path: string, text: string | undefined): ControlRequest {
  return {
    method,
    url: client.baseUrl.replace(/\\/+$/, '') + path,
    headers: { ...(text === undefined ? {} : { 'content-type': 'application/json' }), accept: 'application/json', [CONTROL_TOKEN_HEADER]: client.token },
    ...(text === undefined ? {} : { body: text }),
  };
}

/**
 * A control operation's request with a body the typed functions never write (\`{not json\`): for the
 * deliberate probes that ask whether a route is there without changing anything. Same method, URL
 * and headers as the typed request; path parameters from \`params\`.
 */
export function controlProbeRequest(client: ControlClient, operationId: ControlOperationId, params: Record<string, ControlId>, rawBody?: string): ControlRequest {
  const { method, path } = CONTROL_OPERATIONS[operationId];
  const filled = path.replace(/\\{([^}]+)\\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new TypeError(\`\${operationId}: no value for the path parameter \${name}\`);
    return encodeURIComponent(String(value));
  });
  return build(client, method, filled, rawBody);
}

const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/** Sends a built request (a typed one, or a probe) through \`client.send\` and reads the answer. */
export async function sendControlRequest<T = unknown>(client: ControlClient, request: ControlRequest): Promise<ControlAnswer<T>> {
  const response = await client.send(request);
  const text = typeof response.body === 'string' ? response.body : decoder.decode(response.body);
  let json: unknown;
  try {
    json = parseExactJson(text);
  } catch {
    json = undefined;
  }
  return { request, status: response.status, text, json };
}

`;

/**
 * The typed control-API client (`src/generated/control-client.ts`): per control operation, a
 * function that builds the request (method, path with its parameters encoded, the token header,
 * the JSON body written with exact numbers) and one that sends it through the caller's `send`. No
 * transport inside: the runner sends through its `Transport`, the Pact verifier and the benches
 * through fetch.
 */
export function generateControlClient(spec: SpecSource): GeneratedFile[] {
  const model = specModel(spec);
  const operations = readControlOperations(model);
  if (operations.length === 0)
    throw new SpecError('bad-spec', `${spec.name}: no operation is tagged control (needed by the control-API client)`);
  const headers = new Set(operations.map((operation) => operation.tokenHeader));
  if (headers.size !== 1)
    throw new SpecError(
      'bad-spec',
      `${spec.name}: the control operations name ${headers.size} token headers; the client sends one`,
    );
  const tokenHeader = [...headers][0]!.toLowerCase();
  const types = new TypeWriter(model);
  const code = operations.map((operation) => operationCode(operation, types));
  const table = operations.map(
    (operation) =>
      `  ${operation.operationId}: { method: ${JSON.stringify(operation.method)}, path: ${JSON.stringify(operation.path)} },`,
  );
  const contents = `/* eslint-disable */
// GENERATED by \`npm run generate\` from ${spec.name} (sha256 ${spec.sha256}).
// Do not edit: change the spec and regenerate. A test fails when this file is stale.
import { parseExactJson, stringifyExact, type LosslessNumber } from '../core/exact-json.js';

/** sha256 of the spec text this client was generated from. */
export const SPEC_SHA256 = ${JSON.stringify(spec.sha256)};

/** The header that carries the control token (the spec's ${[...headers][0]} security scheme), as sent. */
export const CONTROL_TOKEN_HEADER = ${JSON.stringify(tokenHeader)};

/** Every control operation: method and path template. */
export const CONTROL_OPERATIONS = {
${table.join('\n')}
} as const;

${CLIENT_TYPES}${CLIENT_RUNTIME}${[...types.declarations.values()].join('\n\n')}

${code.join('\n\n')}
`;
  return [{ path: CONTROL_CLIENT_PATH, contents }];
}
