import { SpecError } from '../core/errors.js';
import type { ExactJson } from '../core/exact-json.js';
import { followLocalRef, isNode, METHODS, rulesOf, type Method, type Node, type SpecSource } from './document.js';

/** One operation of the spec's paths: where it is, what it carries, which rules it cites. */
interface SpecOperation {
  method: Method;
  path: string;
  /** The spec's operationId (undefined when it has none: readers that need one say so). */
  operationId: string | undefined;
  tags: string[];
  /** Tagged `control`: a test double's control API, not the service. */
  control: boolean;
  /** The servers that apply: the operation's, else its path item's, else the document's. */
  servers: unknown;
  /** Parameters of the path item, then of the operation (unresolved). */
  parameters: unknown[];
  /** Security requirements: the operation's, else the document's. */
  security: unknown[];
  /** The operation's own `x-rules`. */
  rules: string[];
  item: Node;
  node: Node;
}

/** One webhook (a callback the service sends) and the payload schema its encrypted body names. */
interface SpecWebhook {
  name: string;
  method: Method;
  node: Node;
  /** The component schema of the plain (decrypted) payload, from the body's `x-encrypted`. */
  payloadSchema: string | undefined;
  /** The payload's `if: {type: {const: N}} then: $ref` dispatch: one schema per callback type. */
  types: Array<{ type: number; schema: string }>;
}

/** The spec read once: refs resolved, operations, webhooks, examples; numbers exact. */
export class SpecModel {
  readonly document: Node;

  constructor(readonly source: SpecSource) {
    this.document = source.exact;
  }

  get name(): string {
    return this.source.name;
  }

  /** The node at a local JSON pointer (`#/components/schemas/X`); a SpecError when there is none. */
  at(ref: string): unknown {
    if (!ref.startsWith('#/')) throw new SpecError('bad-spec', `only local $refs are supported, not ${ref}`);
    const node = followLocalRef(this.document, ref);
    if (node === undefined) throw new SpecError('bad-spec', `$ref ${ref} points nowhere`);
    return node;
  }

  /** Follows `$ref` chains; the last name of a component reached is kept. */
  resolve(node: unknown): { node: Node; name?: string } {
    let current = node;
    let name: string | undefined;
    for (let hops = 0; isNode(current) && typeof current.$ref === 'string'; hops++) {
      if (hops > 32) throw new SpecError('bad-spec', `$ref cycle at ${current.$ref}`);
      name = current.$ref.split('/').pop();
      current = this.at(current.$ref);
    }
    if (!isNode(current)) throw new SpecError('bad-spec', 'expected an object in the spec');
    return name === undefined ? { node: current } : { node: current, name };
  }

  /** The component name a `$ref` names, if any. */
  refName(node: unknown): string | undefined {
    return isNode(node) && typeof node.$ref === 'string' ? node.$ref.split('/').pop() : undefined;
  }

  /** A component schema by name (exact numbers), undefined when the spec has none. */
  schema(name: string): Node | undefined {
    const schemas = isNode(this.document.components) && isNode(this.document.components.schemas) ? this.document.components.schemas : {};
    const schema = schemas[name];
    return isNode(schema) ? schema : undefined;
  }

  /** Every operation of the paths, in the spec's order (paths, then {@link METHODS}). */
  operations(): SpecOperation[] {
    const out: SpecOperation[] = [];
    for (const [path, item] of Object.entries(isNode(this.document.paths) ? this.document.paths : {})) {
      if (!isNode(item)) continue;
      for (const method of METHODS) {
        const node = item[method];
        if (!isNode(node)) continue;
        const tags = Array.isArray(node.tags) ? node.tags.map(String) : [];
        out.push({
          method,
          path,
          operationId: typeof node.operationId === 'string' ? node.operationId : undefined,
          tags,
          control: tags.includes('control'),
          servers: node.servers ?? item.servers ?? this.document.servers,
          parameters: [...(Array.isArray(item.parameters) ? item.parameters : []), ...(Array.isArray(node.parameters) ? node.parameters : [])],
          security: (Array.isArray(node.security) ? node.security : Array.isArray(this.document.security) ? this.document.security : []) as unknown[],
          rules: rulesOf(node),
          item,
          node,
        });
      }
    }
    return out;
  }

  /** The operation with this operationId, if any. */
  operation(operationId: string): SpecOperation | undefined {
    return this.operations().find((operation) => operation.operationId === operationId);
  }

  /** The schema of an operation's request body (first media type), unresolved. */
  requestSchema(operation: Node): Node | undefined {
    if (!operation.requestBody) return undefined;
    const body = this.resolve(operation.requestBody).node;
    const media = isNode(body.content) ? Object.values(body.content).find(isNode) : undefined;
    return media && isNode(media.schema) ? media.schema : undefined;
  }

  /**
   * The webhooks: each POST's encrypted body names its plain schema, whose `if: {type: {const: N}}`
   * branches name one schema per callback type (sorted by type).
   */
  webhooks(): SpecWebhook[] {
    const out: SpecWebhook[] = [];
    for (const [name, item] of Object.entries(isNode(this.document.webhooks) ? this.document.webhooks : {})) {
      if (!isNode(item)) continue;
      for (const method of METHODS) {
        const node = item[method];
        if (!isNode(node)) continue;
        const body = this.requestSchema(node);
        const marker = body ? this.resolve(body).node['x-encrypted'] : undefined;
        const payloadSchema = isNode(marker) ? this.refName(marker.plaintext) : undefined;
        out.push({ name, method, node, payloadSchema, types: isNode(marker) ? this.typeDispatch(marker.plaintext) : [] });
      }
    }
    return out;
  }

  /** Every callback type the spec dispatches on, with its schema and the webhook delivering it; sorted by type. */
  callbackTypes(): Array<{ type: number; schema: string; webhook: SpecWebhook }> {
    return this.webhooks()
      .flatMap((webhook) => webhook.types.map((entry) => ({ ...entry, webhook })))
      .sort((a, b) => a.type - b.type);
  }

  /** The `allOf: [{if: {properties: {type: {const: N}}}, then: {$ref}}]` dispatch of a payload schema. */
  private typeDispatch(payload: unknown): Array<{ type: number; schema: string }> {
    const out: Array<{ type: number; schema: string }> = [];
    const { node } = this.resolve(payload);
    for (const part of Array.isArray(node.allOf) ? node.allOf : []) {
      if (!isNode(part) || !isNode(part.if) || !isNode(part.then)) continue;
      const typeConst = isNode(part.if.properties) && isNode(part.if.properties.type) ? part.if.properties.type.const : undefined;
      const schema = this.refName(part.then);
      if (typeConst === undefined || !schema) continue;
      out.push({ type: Number(String(typeConst)), schema });
    }
    return out.sort((a, b) => a.type - b.type);
  }

  /**
   * The `index`-th example of a component schema, exact (numbers keep their literal digits); a
   * SpecError naming `purpose` when there is none.
   *
   * @example model.example('OrderRequest', 0, 'the Pact contract').amount // LosslessNumber '12345678901234567890.123'
   */
  example(schema: string, index = 0, purpose = 'the toolkit'): ExactJson {
    const examples = this.schema(schema)?.examples;
    const value = Array.isArray(examples) ? (examples[index] as ExactJson | undefined) : undefined;
    if (value === undefined) throw new SpecError('missing-example', `${this.name}: components.schemas.${schema} has no example ${index}, which ${purpose} needs`);
    return value;
  }

  /** The example of a component parameter (`components.parameters.X.example`), exact. */
  parameterExample(name: string): ExactJson | undefined {
    const parameters = isNode(this.document.components) && isNode(this.document.components.parameters) ? this.document.components.parameters : {};
    const parameter = parameters[name];
    return isNode(parameter) ? (parameter.example as ExactJson | undefined) : undefined;
  }
}

const models = new WeakMap<SpecSource, SpecModel>();

/** The model of a loaded spec (built once per SpecSource). */
export function specModel(source: SpecSource): SpecModel {
  let model = models.get(source);
  if (!model) {
    model = new SpecModel(source);
    models.set(source, model);
  }
  return model;
}
