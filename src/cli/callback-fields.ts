import { readFileSync } from 'node:fs';
import { SPEC_PATH } from '../core/package-paths.js';
import { followLocalRef, parseSpec, type SpecSource } from '../generate/spec-document.js';

/** The provider's public docs spell these fields otherwise; real callbacks may carry either spelling. */
const OTHER_SPELLINGS: Readonly<Record<string, string>> = { txid: 'txId', chain: 'chainName' };

/**
 * The payload fields the spec gives callback `type` (CallbackCommon plus the type's schema, and
 * the provider's spellings txId/chainName): what `callback send --field` can set without a warning.
 *
 * @example callbackFields(spec, 4) // Set { 'type', 'requestUUID', 'trackingId', 'tenantUserId', 'business', 'callBackId', 'chain', 'address', 'chainName' }
 */
export function callbackFields(spec: SpecSource, type: number): Set<string> {
  const fields = new Set<string>();
  const add = (ref: string) => {
    const schema = followLocalRef(spec.document, ref) as { properties?: Record<string, unknown>; allOf?: Array<{ $ref?: string }> } | undefined;
    for (const part of schema?.allOf ?? []) if (part.$ref) add(part.$ref);
    for (const name of Object.keys(schema?.properties ?? {})) {
      fields.add(name);
      const other = OTHER_SPELLINGS[name];
      if (other) fields.add(other);
    }
  };
  // CallbackPayload: allOf [CallbackCommon, {if: {properties: {type: {const: T}}}, then: {$ref}} ...].
  const payload = followLocalRef(spec.document, '#/components/schemas/CallbackPayload') as { allOf?: Array<Record<string, unknown>> } | undefined;
  for (const part of payload?.allOf ?? []) {
    if (typeof part.$ref === 'string') add(part.$ref);
    const condition = part.if as { properties?: { type?: { const?: unknown } } } | undefined;
    const then = part.then as { $ref?: string } | undefined;
    if (condition?.properties?.type?.const === type && then?.$ref) add(then.$ref);
  }
  return fields;
}

/** The packaged spec's fields of `type` (see {@link callbackFields}). */
export function packagedCallbackFields(type: number): Set<string> {
  return callbackFields(parseSpec(readFileSync(SPEC_PATH, 'utf8')), type);
}
