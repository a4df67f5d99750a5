import { parse as parseYaml } from 'yaml';
import { SpecError } from './errors.js';

/** How much a rule weighs: MUST fails a run, SHOULD warns unless --strict, UNSPECIFIED is an assumption. */
export type RuleSeverity = 'MUST' | 'SHOULD' | 'UNSPECIFIED';

/** One rule of the interface, as spec/rules.yaml records it. */
export interface Rule {
  id: string;
  text: string;
  severity: RuleSeverity;
  /** The interface.md section the rule comes from. */
  source: string;
  /** Can a check observe it from outside? When not, `reason` says why. */
  blackBox: boolean;
  reason?: string;
}

/** Rule ids look like `CB-KEY-401`: upper-case words joined by '-'. */
export const RULE_ID_PATTERN = /^[A-Z0-9]+(-[A-Z0-9]+)+$/;

/** Parses spec/rules.yaml; a malformed entry is a SpecError that names it. */
export function parseRuleCatalog(text: string, name = 'spec/rules.yaml'): Rule[] {
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (error) {
    throw new SpecError('bad-rules', `${name}: not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  const list = (parsed as { rules?: unknown })?.rules;
  if (!Array.isArray(list)) throw new SpecError('bad-rules', `${name}: expected a 'rules:' list`);
  const seen = new Set<string>();
  return list.map((entry: Record<string, unknown>, i) => {
    const id = String(entry?.id ?? '');
    if (!RULE_ID_PATTERN.test(id)) throw new SpecError('bad-rules', `${name}: rule #${i + 1} has no valid id`);
    if (seen.has(id)) throw new SpecError('bad-rules', `${name}: rule ${id} is listed twice`);
    seen.add(id);
    const severity = entry.severity;
    if (severity !== 'MUST' && severity !== 'SHOULD' && severity !== 'UNSPECIFIED') {
      throw new SpecError('bad-rules', `${name}: rule ${id} has severity ${JSON.stringify(severity)} (MUST, SHOULD or UNSPECIFIED)`);
    }
    return {
      id,
      text: String(entry.text ?? ''),
      severity,
      source: String(entry.source ?? ''),
      blackBox: entry.blackBox !== false,
      ...(entry.reason === undefined ? {} : { reason: String(entry.reason) }),
    };
  });
}
