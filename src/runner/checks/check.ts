import type { SchemaIssue } from '../../core/schemas.js';
import type { CheckContext, Exchange } from '../context.js';
import type { Finding } from '../types.js';

/** A conformance check: code, registered by id in checks/index.ts, parameterised by suite data. */
export interface Check {
  id: string;
  title: string;
  /** The rules it enforces when the case does not narrow them. */
  rules: string[];
  /** What the step must have produced for the check to judge anything. */
  needs?: 'exchange' | 'callbacks' | 'probe';
  run(ctx: CheckContext): Finding[];
}

/** A passed finding. */
export const pass = (message = ''): Finding => ({ status: 'passed', message });
/** A failed finding; the engine turns it into a warning when its rules are only SHOULD/U-*. */
export const fail = (message: string): Finding => ({ status: 'failed', message });

/** The last exchange of the step, or a finding that says why there is none. */
export function lastExchange(ctx: CheckContext): Exchange | Finding {
  const exchange = ctx.outcome.exchanges.at(-1);
  if (!exchange) return fail('the step made no request');
  if (exchange.error || !exchange.response) return fail(`no answer: ${exchange.error ?? 'unknown transport failure'}`);
  return exchange;
}

/** Is this a finding (as opposed to the exchange it stands in for)? */
export function isFinding(value: unknown): value is Finding {
  return typeof value === 'object' && value !== null && 'status' in value && !('request' in value);
}

/** One line per schema issue, with the rules it breaks. */
export function describeIssues(issues: SchemaIssue[]): string {
  return issues.map((issue) => `${issue.message}${issue.rules.length ? ` [${issue.rules.join(', ')}]` : ''}`).join('; ');
}

/** A short view of a body for messages. */
export function preview(text: string, max = 160): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
