import { SpecError } from '../core/errors.js';
import type { ExactJson } from '../core/exact-json.js';
import { followLocalRef, isNode, walkJson, type Node, type SpecSource } from './document.js';
import { OperationReader, type SpecCallback, type SpecEndpoint, type SpecServer } from './endpoints.js';
import { Flattener, type EncryptedMarker, type FlatSchema } from './flatten.js';

/** The document's `info`, as the docs show it. */
interface SpecInfo {
  title?: string;
  version?: string;
  summary?: string;
  description?: string;
}

/**
 * One place in the spec that carries an annotation of ours, with its JSON pointer: what spec-lint
 * checks and the docs list. Values are as written (spec-lint judges them); `encrypted` is read.
 */
interface SpecAnnotation {
  pointer: string;
  /** `x-rules` as written. */
  rules?: unknown;
  /** `x-unspecified` as written. */
  unspecified?: unknown;
  encrypted?: EncryptedMarker;
}

/**
 * The spec read once: schemas flattened ({@link SpecModel.flatten}), endpoints, callbacks and the
 * control API as typed views, examples; numbers exact. The only reader of the raw document:
 * everything outside src/spec asks this model (see docs/decisions/0088-spec-model.md).
 */
export class SpecModel {
  /** The raw document (exact numbers): only the model reads it; everything else asks the views. */
  private readonly document: Node;
  private readonly flattener: Flattener;
  private readonly reader: OperationReader;
  private endpointViews: SpecEndpoint[] | undefined;
  private callbackViews: SpecCallback[] | undefined;
  private readonly components = new Map<string, FlatSchema>();

  constructor(private readonly source: SpecSource) {
    this.document = source.exact;
    this.flattener = new Flattener((ref) => this.at(ref));
    this.reader = new OperationReader(
      this.document,
      (node, where) => {
        try {
          return this.resolve(node);
        } catch (error) {
          if (error instanceof SpecError) throw new SpecError(error.reason, `${where}: ${error.message}`);
          throw error;
        }
      },
      this.flattener,
    );
  }

  /**
   * The one flattening of the spec's schemas: a component by name, or (inside src/spec) a schema
   * node; `$ref`s followed, `allOf` merged (see {@link FlatSchema}). Built once per node.
   *
   * @example model.flatten('OrderRequest').properties.amount.name // 'Decimal'
   */
  flatten(schema: string | Node): FlatSchema {
    if (typeof schema !== 'string') return this.flattener.flatten(schema);
    let view = this.components.get(schema);
    if (!view) {
      if (!this.schema(schema)) throw new SpecError('bad-spec', `${this.name}: no component schema ${schema}`);
      view = this.flattener.flatten({ $ref: `#/components/schemas/${schema}` });
      this.components.set(schema, view);
    }
    return view;
  }

  /** The component schemas' names, in the spec's order. */
  schemaNames(): string[] {
    return Object.keys(
      isNode(this.document.components) && isNode(this.document.components.schemas)
        ? this.document.components.schemas
        : {},
    );
  }

  /** Every operation of the paths as a typed view, in the spec's order (the control API's included, marked). Built once. */
  endpoints(): SpecEndpoint[] {
    this.endpointViews ??= this.reader.endpoints();
    return this.endpointViews;
  }

  /** The endpoint with this operationId, if any. */
  endpoint(operationId: string): SpecEndpoint | undefined {
    return this.endpoints().find((endpoint) => endpoint.operationId === operationId);
  }

  /** The service's endpoints (the control API left out). */
  serviceEndpoints(): SpecEndpoint[] {
    return this.endpoints().filter((endpoint) => !endpoint.control);
  }

  /** The control API of the test doubles (operations tagged `control`). */
  controlOperations(): SpecEndpoint[] {
    return this.endpoints().filter((endpoint) => endpoint.control);
  }

  /** The webhooks as typed views: the callbacks the service sends, each with its payload's type dispatch. Built once. */
  callbacks(): SpecCallback[] {
    this.callbackViews ??= this.reader.callbacks();
    return this.callbackViews;
  }

  /** The document's servers. */
  servers(): SpecServer[] {
    return this.reader.servers(this.document.servers);
  }

  /** The document's `info`. */
  info(): SpecInfo {
    const info = isNode(this.document.info) ? this.document.info : {};
    const out: SpecInfo = {};
    for (const key of ['title', 'version', 'summary', 'description'] as const)
      if (info[key] !== undefined) out[key] = String(info[key]);
    return out;
  }

  /** Every node carrying `x-rules`, `x-unspecified` or `x-encrypted`, in document order, with its JSON pointer. */
  annotations(): SpecAnnotation[] {
    const out: SpecAnnotation[] = [];
    walkJson(this.document, (node, pointer) => {
      if (node['x-rules'] === undefined && node['x-unspecified'] === undefined && node['x-encrypted'] === undefined)
        return;
      const marker = node['x-encrypted'];
      const encrypted =
        marker === undefined
          ? undefined
          : this.flattener.flatten({ 'x-encrypted': isNode(marker) ? marker : {} }).encrypted;
      out.push({
        pointer,
        ...(node['x-rules'] !== undefined ? { rules: node['x-rules'] } : {}),
        ...(node['x-unspecified'] !== undefined ? { unspecified: node['x-unspecified'] } : {}),
        ...(marker !== undefined
          ? { encrypted: encrypted ?? { direction: '', plaintext: undefined, plaintextRef: undefined } }
          : {}),
      });
    });
    return out;
  }

  get name(): string {
    return this.source.name;
  }

  /** The node at a local JSON pointer (`#/components/schemas/X`); a SpecError when there is none. */
  private at(ref: string): unknown {
    if (!ref.startsWith('#/')) throw new SpecError('bad-spec', `only local $refs are supported, not ${ref}`);
    const node = followLocalRef(this.document, ref);
    if (node === undefined) throw new SpecError('bad-spec', `$ref ${ref} points nowhere`);
    return node;
  }

  /** Follows `$ref` chains; the last name of a component reached is kept. */
  private resolve(node: unknown): { node: Node; name?: string } {
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

  /** The raw component schema by name (exact numbers), undefined when the spec has none. Readers use {@link SpecModel.flatten}. */
  private schema(name: string): Node | undefined {
    const schemas =
      isNode(this.document.components) && isNode(this.document.components.schemas)
        ? this.document.components.schemas
        : {};
    const schema = schemas[name];
    return isNode(schema) ? schema : undefined;
  }

  /** Every callback type the spec dispatches on, with its schema and the name of the webhook delivering it; sorted by type. */
  callbackTypes(): Array<{ type: number; schema: string; webhook: string }> {
    return this.callbacks()
      .flatMap(({ name, types }) => types.map((entry) => ({ ...entry, webhook: name })))
      .sort((a, b) => a.type - b.type);
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
    if (value === undefined)
      throw new SpecError(
        'missing-example',
        `${this.name}: components.schemas.${schema} has no example ${index}, which ${purpose} needs`,
      );
    return value;
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
