import { parse as parseYaml } from 'yaml';
import { SpecError } from './errors.js';

/** How much a rule weighs: MUST fails a run, SHOULD warns unless --strict, UNSPECIFIED is an assumption. */
type RuleSeverity = 'MUST' | 'SHOULD' | 'UNSPECIFIED';

/**
 * The party a rule obliges: the `service` (the wallet), the `merchant` (the caller of the order
 * endpoints and the callback receiver), or `both` (a rule on the wire that one sends and the other
 * reads, such as a Content-Type or the Base64 of `data`).
 */
type RuleParty = 'service' | 'merchant' | 'both';

/** One rule of the interface, as spec/rules.yaml records it. */
export interface Rule {
  id: string;
  text: string;
  severity: RuleSeverity;
  /** Whom the rule obliges (spec/rules.yaml `binds`); absent means `both`. */
  binds?: RuleParty;
  /** The section of the interface the rule comes from. */
  source: string;
  /** Can a check observe it from outside? When not, `reason` says why. */
  blackBox: boolean;
  reason?: string;
}

/** Does the rule oblige this side (the target of a run)? */
export function bindsSide(rule: Pick<Rule, 'binds'>, side: 'service' | 'merchant'): boolean {
  return rule.binds === undefined || rule.binds === 'both' || rule.binds === side;
}

/** Rule ids look like `CB-KEY-401`: upper-case words joined by '-'. */
const RULE_ID_PATTERN = /^[A-Z0-9]+(-[A-Z0-9]+)+$/;

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
      throw new SpecError(
        'bad-rules',
        `${name}: rule ${id} has severity ${JSON.stringify(severity)} (MUST, SHOULD or UNSPECIFIED)`,
      );
    }
    const binds = entry.binds ?? 'both';
    if (binds !== 'service' && binds !== 'merchant' && binds !== 'both') {
      throw new SpecError(
        'bad-rules',
        `${name}: rule ${id} has binds ${JSON.stringify(binds)} (service, merchant or both)`,
      );
    }
    return {
      id,
      text: String(entry.text ?? ''),
      severity,
      binds,
      source: String(entry.source ?? ''),
      blackBox: entry.blackBox !== false,
      ...(entry.reason === undefined ? {} : { reason: String(entry.reason) }),
    };
  });
}
