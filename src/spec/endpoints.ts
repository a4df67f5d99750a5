import type { ExactJson } from '../core/exact-json.js';
import { isNode, METHODS, rulesOf, type Method, type Node } from './document.js';
import {
  encryptedField,
  type EncryptedMarker,
  type FlatSchema,
  type Flattener,
  type UnspecifiedNote,
} from './flatten.js';

/** A server of the spec: its URL (often one variable, `{base_url}`) and the variables' defaults. */
export interface SpecServer {
  url: string;
  description?: string;
  variables: Record<string, { default?: string; description?: string }>;
}

/** A parameter, its `$ref` followed. */
export interface SpecParameter {
  name: string;
  in: string;
  required: boolean;
  description?: string;
  /** The component parameter it names (`XApiKey`), when it is a `$ref`. */
  component?: string;
  schema: FlatSchema;
  /** Its `example`, exact (absent when it has none). */
  example?: ExactJson;
  /** The rules written beside the `$ref`, then those of the parameter itself. */
  rules: string[];
  /** The `x-rules` of the parameter the `$ref` chain ends at. */
  ownRules: string[];
  unspecified: UnspecifiedNote[];
}

/** The field of a body marked `x-encrypted`, and the plain schema it carries. */
interface SpecEncryptedField {
  /** The property's name (`data`); undefined when the whole body is the encrypted text (a callback, CB-RAW-BODY). */
  field: string | undefined;
  /** The property (or the whole body's schema), flattened: its pattern, its own rules in `site.rules`. */
  schema: FlatSchema;
  marker: EncryptedMarker;
  /** The plain (decrypted) schema, flattened; undefined when the marker names no component. */
  plain: FlatSchema | undefined;
}

/** One media type of a body. */
export interface SpecMedia {
  /** As written (`application/x-www-form-urlencoded`). */
  mediaType: string;
  /** The media type object's own `x-rules` (CONTENT-TYPE rules sit there). */
  rules: string[];
  /** Its schema, flattened; `schema.name` is the component when it is a `$ref` to one. */
  schema: FlatSchema;
  /** Whether the schema is written as a `$ref` to a component schema (the validators exist per component). */
  schemaIsComponent: boolean;
  /** The field marked `x-encrypted`, if any (any direction). */
  encrypted?: SpecEncryptedField;
}

/** A request body, its `$ref` followed. */
interface SpecRequestBody {
  required: boolean;
  description?: string;
  component?: string;
  /** Rules beside the `$ref`, then the body's own. */
  rules: string[];
  media: SpecMedia[];
}

/** One response of an operation, its `$ref` followed. */
interface SpecResponse {
  /** As written: `200`, `401`, `default`. */
  status: string;
  /** The component response it names (`Unauthorized`), when it is a `$ref`. */
  component?: string;
  description?: string;
  /** Rules beside the `$ref`, then the response's own. */
  rules: string[];
  unspecified: UnspecifiedNote[];
  media: SpecMedia[];
}

/** The API key an operation requires: its header and the rules on it (parameter and scheme). */
interface SpecApiKey {
  header: string;
  /** The security scheme's name (`apiKey`). */
  scheme: string;
  rules: string[];
}

/** What every operation view has, an endpoint of the paths or a callback of the webhooks. */
export interface SpecOperationView {
  method: Method;
  operationId: string | undefined;
  tags: string[];
  summary?: string;
  description?: string;
  /** Security requirements that apply: the operation's, else the document's. */
  security: Array<Record<string, string[]>>;
  /** The operation writes `security` itself (`security: []` declares no authentication). */
  declaresSecurity: boolean;
  /** The API key header the security requires, if any. */
  apiKey: SpecApiKey | undefined;
  /** Parameters of the path item, then of the operation. */
  parameters: SpecParameter[];
  requestBody: SpecRequestBody | undefined;
  responses: SpecResponse[];
  /** The operation's own `x-rules`. */
  rules: string[];
  /** The operation's own `x-unspecified`. */
  unspecified: UnspecifiedNote[];
}

/** One operation of the spec's paths (the service's endpoints and the control API). */
export interface SpecEndpoint extends SpecOperationView {
  path: string;
  /** Tagged `control`: a test double's control API, not the service. */
  control: boolean;
  /** The servers that apply: the operation's, else its path item's, else the document's. */
  servers: SpecServer[];
}

/** One webhook: a callback the service sends, with its payload's dispatch on `type`. */
export interface SpecCallback extends SpecOperationView {
  /** The webhook's name (`walletCallback`). */
  name: string;
  /** The plain payload schema the encrypted body names (`CallbackPayload`), flattened. */
  payload: FlatSchema | undefined;
  /** The payload's `if: {type: {const: N}} then: $ref` dispatch: one component schema per callback type, sorted. */
  types: Array<{ type: number; schema: string }>;
}

/** Reads operation objects of one document into views; `resolve` follows `$ref`s (SpecError when dangling). */
export class OperationReader {
  constructor(
    private readonly root: Node,
    private readonly resolve: (node: unknown, where: string) => { node: Node; name?: string },
    private readonly flattener: Flattener,
  ) {}

  servers(value: unknown): SpecServer[] {
    return (Array.isArray(value) ? value : []).filter(isNode).map((server) => ({
      url: String(server.url ?? ''),
      ...(typeof server.description === 'string' ? { description: server.description } : {}),
      variables: Object.fromEntries(
        Object.entries(isNode(server.variables) ? server.variables : {}).map(([name, variable]) => [
          name,
          {
            ...(isNode(variable) && variable.default !== undefined ? { default: String(variable.default) } : {}),
            ...(isNode(variable) && typeof variable.description === 'string'
              ? { description: variable.description }
              : {}),
          },
        ]),
      ),
    }));
  }

  endpoints(): SpecEndpoint[] {
    const out: SpecEndpoint[] = [];
    for (const [path, item] of Object.entries(isNode(this.root.paths) ? this.root.paths : {})) {
      if (!isNode(item)) continue;
      for (const method of METHODS) {
        const node = item[method];
        if (!isNode(node)) continue;
        const where = `${method.toUpperCase()} ${path}`;
        const view = this.operation(method, node, item, where);
        out.push({
          ...view,
          path,
          control: view.tags.includes('control'),
          servers: this.servers(node.servers ?? item.servers ?? this.root.servers),
        });
      }
    }
    return out;
  }

  callbacks(): SpecCallback[] {
    const out: SpecCallback[] = [];
    for (const [name, item] of Object.entries(isNode(this.root.webhooks) ? this.root.webhooks : {})) {
      if (!isNode(item)) continue;
      for (const method of METHODS) {
        const node = item[method];
        if (!isNode(node)) continue;
        const view = this.operation(method, node, item, `webhook ${name} ${method.toUpperCase()}`);
        const plain = view.requestBody?.media[0]?.schema.encrypted?.plaintext;
        const payload =
          plain !== undefined ? this.flattener.flatten({ $ref: `#/components/schemas/${plain}` }) : undefined;
        out.push({ ...view, name, payload, types: payload ? typeDispatch(payload) : [] });
      }
    }
    return out;
  }

  private operation(method: Method, node: Node, item: Node, where: string): SpecOperationView {
    const tags = Array.isArray(node.tags) ? node.tags.map(String) : [];
    const security = (
      Array.isArray(node.security) ? node.security : Array.isArray(this.root.security) ? this.root.security : []
    ).filter(isNode) as Array<Record<string, string[]>>;
    const rawParameters = [
      ...(Array.isArray(item.parameters) ? item.parameters : []),
      ...(Array.isArray(node.parameters) ? node.parameters : []),
    ];
    const parameters = rawParameters.map((raw) => this.parameter(raw, `${where} parameters`));
    return {
      method,
      operationId: typeof node.operationId === 'string' ? node.operationId : undefined,
      tags,
      ...(typeof node.summary === 'string' ? { summary: node.summary } : {}),
      ...(typeof node.description === 'string' ? { description: node.description } : {}),
      security,
      declaresSecurity: Array.isArray(node.security),
      apiKey: this.apiKey(security, rawParameters, where),
      parameters,
      requestBody:
        node.requestBody === undefined ? undefined : this.requestBody(node.requestBody, `${where} requestBody`),
      responses: Object.entries(isNode(node.responses) ? node.responses : {}).map(([status, raw]) =>
        this.response(status, raw, `${where} ${status}`),
      ),
      rules: rulesOf(node),
      unspecified: notesOf(node),
    };
  }

  private parameter(raw: unknown, where: string): SpecParameter {
    const { node, name } = this.resolve(raw, where);
    return {
      name: String(node.name ?? ''),
      in: String(node.in ?? ''),
      required: node.required === true,
      ...(typeof node.description === 'string' ? { description: node.description } : {}),
      ...(isNode(raw) && typeof raw.$ref === 'string' && name !== undefined ? { component: name } : {}),
      schema: this.flattener.flatten(node.schema),
      ...(node.example !== undefined ? { example: node.example as ExactJson } : {}),
      rules: [...new Set([...rulesOf(raw), ...rulesOf(node)])],
      ownRules: rulesOf(node),
      unspecified: notesOf(node),
    };
  }

  private apiKey(
    security: Array<Record<string, string[]>>,
    rawParameters: unknown[],
    where: string,
  ): SpecApiKey | undefined {
    const components = isNode(this.root.components) ? this.root.components : {};
    const schemes = isNode(components.securitySchemes) ? components.securitySchemes : {};
    for (const requirement of security) {
      for (const scheme of Object.keys(requirement)) {
        const { node } = this.resolve(schemes[scheme], `${where} security ${scheme}`);
        if (node.type !== 'apiKey' || node.in !== 'header' || typeof node.name !== 'string') continue;
        const header = node.name;
        const parameter = rawParameters
          .map((raw) => this.resolve(raw, `${where} parameters`).node)
          .find((p) => p.in === 'header' && String(p.name).toLowerCase() === header.toLowerCase());
        return { header, scheme, rules: [...new Set([...rulesOf(parameter), ...rulesOf(node)])] };
      }
    }
    return undefined;
  }

  private requestBody(raw: unknown, where: string): SpecRequestBody {
    const { node, name } = this.resolve(raw, where);
    return {
      required: node.required === true,
      ...(typeof node.description === 'string' ? { description: node.description } : {}),
      ...(isNode(raw) && typeof raw.$ref === 'string' && name !== undefined ? { component: name } : {}),
      rules: [...new Set([...rulesOf(raw), ...rulesOf(node)])],
      media: this.media(node.content),
    };
  }

  private response(status: string, raw: unknown, where: string): SpecResponse {
    const { node, name } = this.resolve(raw, where);
    return {
      status,
      ...(isNode(raw) && typeof raw.$ref === 'string' && name !== undefined ? { component: name } : {}),
      ...(typeof node.description === 'string' ? { description: node.description } : {}),
      rules: [...new Set([...rulesOf(raw), ...rulesOf(node)])],
      unspecified: notesOf(node),
      media: this.media(node.content),
    };
  }

  private media(content: unknown): SpecMedia[] {
    return Object.entries(isNode(content) ? content : {}).map(([mediaType, media]) => {
      const raw = isNode(media) ? media.schema : undefined;
      const schema = this.flattener.flatten(raw);
      const found =
        encryptedField(schema) ??
        (schema.encrypted ? { field: undefined, schema, marker: schema.encrypted } : undefined);
      const plain = found?.marker.plaintext;
      return {
        mediaType,
        rules: rulesOf(media),
        schema,
        schemaIsComponent:
          isNode(raw) && typeof raw.$ref === 'string' && /^#\/components\/schemas\/[^/]+$/.test(raw.$ref),
        ...(found
          ? {
              encrypted: {
                ...found,
                plain:
                  plain !== undefined ? this.flattener.flatten({ $ref: `#/components/schemas/${plain}` }) : undefined,
              },
            }
          : {}),
      };
    });
  }
}

function notesOf(node: Node): UnspecifiedNote[] {
  const list = node['x-unspecified'];
  return Array.isArray(list)
    ? list.filter(isNode).map((entry) => ({ rule: String(entry.rule ?? ''), note: String(entry.note ?? '') }))
    : [];
}

/** The `if: {properties: {type: {const: N}}} then: <component>` conditions of a payload: one schema per type, sorted. */
function typeDispatch(payload: FlatSchema): Array<{ type: number; schema: string }> {
  const out: Array<{ type: number; schema: string }> = [];
  for (const condition of payload.conditions) {
    const type = condition.if.properties.type;
    if (!type || !('const' in type) || condition.then.name === undefined) continue;
    out.push({ type: Number(String(type.const)), schema: condition.then.name });
  }
  return out.sort((a, b) => a.type - b.type);
}
