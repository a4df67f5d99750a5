/**
 * Schema issues as the text users read: the one wording the runner's findings, the service's
 * refusals (emulator and MSW handlers) and the MSW handlers' field messages share.
 */
import type { SchemaIssue } from './schemas.js';

/** ` [RULE-A, RULE-B]`: the suffix naming the rules an issue or failure broke ('' for none). */
export function ruleSuffix(rules: readonly string[]): string {
  return rules.length > 0 ? ` [${[...new Set(rules)].join(', ')}]` : '';
}

/** How issues are worded. */
interface IssueWording {
  /** Issues shown at most, then `; and N more` (default: all). */
  limit?: number;
  /**
   * Word each issue by its field (`tenantType must be 1`, `amount is required`) instead of the
   * validator's message; `constants` gives the value a `const` keyword wants, by dotted field name.
   */
  fields?: { constants: Readonly<Record<string, unknown>> };
  /** Show an issue worded twice (a field checked by its property and by an if/then branch) once. */
  once?: boolean;
}

/** One issue's text, without its rules. */
function issueText(issue: SchemaIssue, fields: IssueWording['fields']): string {
  if (!fields) return issue.message;
  const field = issue.path.replace(/^\//, '').replaceAll('/', '.') || 'the request';
  const constant = fields.constants[field];
  if (issue.keyword === 'required') return `${field} is required`;
  if (issue.keyword === 'const' && constant !== undefined) return `${field} must be ${JSON.stringify(constant)}`;
  return `${field} ${issue.message.replace(/^\S+ /, '')}`;
}

/**
 * Schema issues as one line, `; `-separated, each naming the rules it breaks:
 * `/code must be integer [ENV-CODE]; /x must be string`.
 */
export function describeIssues(issues: readonly SchemaIssue[], wording: IssueWording = {}): string {
  const worded = issues.map((issue) => issueText(issue, wording.fields) + ruleSuffix(issue.rules));
  const texts = wording.once ? [...new Set(worded)] : worded;
  const limit = wording.limit ?? texts.length;
  return texts.slice(0, limit).join('; ') + (texts.length > limit ? `; and ${texts.length - limit} more` : '');
}
