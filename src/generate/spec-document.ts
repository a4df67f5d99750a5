import { createHash } from 'node:crypto';
import type { OpenAPIV3_1 } from 'openapi-types';
import { parse as parseYaml } from 'yaml';
import { SpecError } from '../core/errors.js';

/** The spec as parsed YAML plus what identifies its exact text. */
export interface SpecSource {
  /** Where it came from, for messages (e.g. `spec/wallet-api.yaml`). */
  name: string;
  text: string;
  sha256: string;
  document: OpenAPIV3_1.Document;
}

/** The spec's extension marking an encrypted string and the schema of its plain form. */
export interface EncryptedMarker {
  direction: 'request' | 'response' | 'callback';
  plaintext: { $ref: string };
}

/** Parses the spec's YAML text; a broken spec is a SpecError naming the line. */
export function parseSpec(text: string, name = 'spec/wallet-api.yaml'): SpecSource {
  let document: unknown;
  try {
    document = parseYaml(text, { prettyErrors: true, uniqueKeys: true });
  } catch (error) {
    throw new SpecError('bad-spec', `${name}: not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  if (!document || typeof document !== 'object' || !('openapi' in document)) {
    throw new SpecError('bad-spec', `${name}: not an OpenAPI document (no 'openapi' field)`);
  }
  return { name, text, sha256: createHash('sha256').update(text).digest('hex'), document: document as OpenAPIV3_1.Document };
}

/** Component schemas by name, in the spec's order. */
export function componentSchemas(spec: SpecSource): Array<[string, Record<string, unknown>]> {
  const schemas = spec.document.components?.schemas ?? {};
  return Object.entries(schemas) as Array<[string, Record<string, unknown>]>;
}

/** Calls `visit` on every object node of a JSON tree with its JSON pointer. */
export function walkJson(node: unknown, visit: (value: Record<string, unknown>, pointer: string) => void, pointer = ''): void {
  if (Array.isArray(node)) {
    node.forEach((item, i) => walkJson(item, visit, `${pointer}/${i}`));
  } else if (node !== null && typeof node === 'object') {
    const record = node as Record<string, unknown>;
    visit(record, pointer);
    for (const [key, value] of Object.entries(record)) {
      walkJson(value, visit, `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`);
    }
  }
}

/**
 * The node a local JSON pointer `$ref` (`#/components/schemas/X`, `~0`/`~1` escapes) points at;
 * undefined when it is not local or points nowhere. Callers word the error for their product.
 */
export function followLocalRef(document: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = document;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    node = Array.isArray(node) ? node[Number(key)] : node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined;
  }
  return node;
}
