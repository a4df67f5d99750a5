import { aliasesOf } from '../spec/callback-types.js';
import type { SpecSource } from '../spec/document.js';
import type { FlatSchema } from '../spec/flatten.js';
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
  const add = (schema: FlatSchema | undefined) => {
    for (const name of Object.keys(schema?.properties ?? {})) {
      fields.add(name);
      for (const alias of aliasesOf(name)) fields.add(alias);
    }
  };
  // The payload schema: allOf [CallbackCommon, {if: {properties: {type: {const: T}}}, then: {$ref}} ...].
  const callback = model.callbacks().find((candidate) => candidate.types.some((entry) => entry.type === type));
  const payload =
    callback?.payload ??
    (model.schemaNames().includes('CallbackPayload') ? model.flatten('CallbackPayload') : undefined);
  for (const part of payload?.parts ?? []) add(part);
  const schema = callback?.types.find((entry) => entry.type === type)?.schema;
  if (schema) add(model.flatten(schema));
  return fields;
}

/** The packaged spec's fields of `type` (see {@link callbackFields}). */
export function packagedCallbackFields(type: number): Set<string> {
  return callbackFields(packagedSpec(), type);
}
