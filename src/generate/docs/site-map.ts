import { callbackTypeEntry, type CallbackTypeTable } from '../../spec/callback-types.js';
import type { SpecCallback, SpecEndpoint } from '../../spec/endpoints.js';
import type { SpecModel } from '../../spec/model.js';
import { humanize, slug } from './words.js';

/** An order or card endpoint of the interface and its page (the control API has none). */
export interface Endpoint {
  pageId: string;
  operationId: string;
  /** Upper case, as a request line writes it. */
  method: string;
  path: string;
  server: string;
  operation: SpecEndpoint;
}

/** One callback type, from the dispatch of the callback payload schema, and its page. */
export interface CallbackType {
  pageId: string;
  type: number;
  schemaName: string;
  label: string;
  /** The webhook operation that delivers it. */
  operation: SpecCallback;
  webhook: string;
}

/** The endpoints of the interface, each with its page id (the control API has no page). */
export function endpointsOf(model: SpecModel): Endpoint[] {
  const rootServer = model.servers()[0]?.url ?? '';
  return model.serviceEndpoints().map((operation) => {
    const id = operation.operationId ?? `${operation.method}-${operation.path}`;
    return {
      pageId: `endpoint-${slug(id)}`,
      operationId: id,
      method: operation.method.toUpperCase(),
      path: operation.path,
      server: operation.servers[0]?.url ?? rootServer,
      operation,
    };
  });
}

/**
 * Callback types come from the spec: each webhook's encrypted body names its plain schema, whose
 * `if: {type: {const: N}}` branches name one schema per type. Their names come from the callback
 * type table (a type the table lacks is named after its schema).
 */
export function callbackTypesOf(model: SpecModel, table: CallbackTypeTable): CallbackType[] {
  return model
    .callbacks()
    .flatMap((operation) => operation.types.map(({ type, schema }) => ({ type, schemaName: schema, operation })))
    .sort((a, b) => a.type - b.type)
    .map(({ type, schemaName, operation }) => {
      const name = callbackTypeEntry(type, table)?.name;
      const label = name ? name.charAt(0).toUpperCase() + name.slice(1) : humanize(schemaName.replace(/Callback$/, ''));
      return { pageId: `callback-${type}-${slug(label)}`, type, schemaName, label, operation, webhook: operation.name };
    });
}
