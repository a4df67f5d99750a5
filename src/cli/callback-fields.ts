import { aliasesOf } from '../spec/callback-types.js';
import { isNode, type SpecSource } from '../spec/document.js';
import { specModel } from '../spec/model.js';
import { packagedSpec } from '../spec/packaged.js';

/**
 * The payload fields the spec gives callback `type` (the payload schema's common part plus the
 * type's schema, and the other spellings txId/chainName of the callback type table): what
 * `callback send --field` can set without a warning.
 *
 * @example callbackFields(spec, 4) // Set { 'type', 'requestUUID', 'trackingId', 'tenantUserId', 'business', 'callBackId', 'chain', 'address', 'chainName' }
 */
export function callbackFields(spec: SpecSource, type: number): Set<string> {
  const model = specModel(spec);
  const fields = new Set<string>();
  const add = (ref: string) => {
    const schema = model.schema(ref.replace('#/components/schemas/', ''));
    for (const part of Array.isArray(schema?.allOf) ? schema.allOf : []) if (isNode(part) && typeof part.$ref === 'string') add(part.$ref);
    for (const name of Object.keys(isNode(schema?.properties) ? schema.properties : {})) {
      fields.add(name);
      for (const alias of aliasesOf(name)) fields.add(alias);
    }
  };
  // The payload schema: allOf [CallbackCommon, {if: {properties: {type: {const: T}}}, then: {$ref}} ...].
  const webhook = model.webhooks().find((candidate) => candidate.types.some((entry) => entry.type === type));
  const payload = model.schema(webhook?.payloadSchema ?? 'CallbackPayload');
  for (const part of Array.isArray(payload?.allOf) ? payload.allOf : []) if (isNode(part) && typeof part.$ref === 'string') add(part.$ref);
  const schema = webhook?.types.find((entry) => entry.type === type)?.schema;
  if (schema) add(schema);
  return fields;
}

/** The packaged spec's fields of `type` (see {@link callbackFields}). */
export function packagedCallbackFields(type: number): Set<string> {
  return callbackFields(packagedSpec(), type);
}
