import { randomBytes, randomUUID } from 'node:crypto';
import { LosslessNumber } from '../core/exact-json.js';

/**
 * Values a template may name: `{{userId}}` (a number), `{{userIdText}}`, `{{id}}`, `{{uuid}}`,
 * `{{hex:64}}` (fresh random hex digits), `{{digits:12}}` (fresh random decimal digits),
 * `{{long:300}}`, `{{saved.order.callBackId}}`.
 */
export interface TemplateScope {
  userId?: number;
  /** Stable within one case: lets a case refer to the same callBackId twice. */
  caseId: string;
  saved: Record<string, unknown>;
  /** The case's last decrypted answer: its plaintext's length in bytes and the callBackId its request carried (`answerLength`). */
  lastAnswer?: { bytes: number; callBackId?: string };
}

const DECIMAL = /^#decimal:(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)$/;

/**
 * Fills `{{...}}` templates in every string of a value. A whole-string template that names a
 * number becomes that number; `#decimal:DIGITS` becomes an exact JSON number (never a float).
 */
export function fill(value: unknown, scope: TemplateScope): unknown {
  if (typeof value === 'string') return fillString(value, scope);
  if (Array.isArray(value)) return value.map((item) => fill(item, scope));
  if (value !== null && typeof value === 'object' && !(value instanceof LosslessNumber)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, scope)]));
  }
  return value;
}

function fillString(text: string, scope: TemplateScope): unknown {
  const decimal = DECIMAL.exec(text);
  if (decimal) return new LosslessNumber(decimal[1]!);
  const whole = /^\{\{([^}]+)\}\}$/.exec(text);
  if (whole) {
    const value = lookup(whole[1]!.trim(), scope);
    if (typeof value !== 'string') return value;
  }
  return text.replace(/\{\{([^}]+)\}\}/g, (_m, name: string) => String(lookup(name.trim(), scope)));
}

function lookup(name: string, scope: TemplateScope): unknown {
  if (name === 'uuid') return randomUUID();
  if (name === 'id') return scope.caseId;
  if (name === 'userId') return scope.userId ?? 0;
  if (name === 'userIdText') return String(scope.userId ?? 0);
  const long = /^long:(\d+)$/.exec(name);
  if (long) return 'L'.repeat(Number(long[1]));
  const digits = /^digits:(\d+)$/.exec(name);
  // Fresh per use, so a digits-only callBackId stays unique across cases and runs (ORDER-CALLBACK-ID).
  if (digits) return Array.from(randomBytes(Number(digits[1])), (byte) => String(byte % 10)).join('');
  const hex = /^hex:(\d+)$/.exec(name);
  if (hex)
    return randomBytes(Math.ceil(Number(hex[1]) / 2))
      .toString('hex')
      .slice(0, Number(hex[1]));
  if (name === 'receiverUrl') return String(scope.saved.receiverUrl ?? '');
  if (name.startsWith('saved.')) {
    let node: unknown = scope.saved;
    for (const part of name.slice('saved.'.length).split('.'))
      node = (node as Record<string, unknown> | undefined)?.[part];
    if (node instanceof LosslessNumber) return node;
    return node;
  }
  return `{{${name}}}`;
}
