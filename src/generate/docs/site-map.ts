import { isNode, type Node } from '../../spec/document.js';
import { callbackTypeEntry, type CallbackTypeTable } from '../../spec/callback-types.js';
import type { SpecModel } from '../../spec/model.js';
import { humanize, slug } from './words.js';

/** An order or card endpoint of the interface (the control API is not one). */
export interface Endpoint {
  pageId: string;
  operationId: string;
  method: string;
  path: string;
  server: string;
  operation: Node;
}

/** One callback type, from the dispatch of the callback payload schema. */
export interface CallbackType {
  pageId: string;
  type: number;
  schemaName: string;
  label: string;
  /** The webhook operation that delivers it. */
  operation: Node;
  webhook: string;
}

/** The endpoints of the interface, each with its page id (the control API has no page). */
export function endpointsOf(model: SpecModel): Endpoint[] {
  const rootServer = firstServer(model.document.servers) ?? '';
  return model
    .operations()
    .filter((operation) => !operation.control)
    .map(({ method, path, operationId, node, item }) => {
      const id = operationId ?? String(node.operationId ?? `${method}-${path}`);
      return {
        pageId: `endpoint-${slug(id)}`,
        operationId: id,
        method: method.toUpperCase(),
        path,
        server: firstServer(node.servers) ?? firstServer(item.servers) ?? rootServer,
        operation: node,
      };
    });
}

function firstServer(servers: unknown): string | undefined {
  return Array.isArray(servers) && isNode(servers[0]) ? String(servers[0].url) : undefined;
}

/**
 * Callback types come from the spec: each webhook's encrypted body names its plain schema, whose
 * `if: {type: {const: N}}` branches name one schema per type. Their names come from the callback
 * type table (a type the table lacks is named after its schema).
 */
export function callbackTypesOf(model: SpecModel, table: CallbackTypeTable): CallbackType[] {
  return model.callbackTypes().map(({ type, schema: schemaName, webhook }) => {
    const name = callbackTypeEntry(type, table)?.name;
    const label = name ? name.charAt(0).toUpperCase() + name.slice(1) : humanize(schemaName.replace(/Callback$/, ''));
    return { pageId: `callback-${type}-${slug(label)}`, type, schemaName, label, operation: webhook.node, webhook: webhook.name };
  });
}
