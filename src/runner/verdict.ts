/**
 * The verdict model: how a finding gets its weight (failed, warning) from the rules it names and the
 * side under test, which rules a finding is judged under, the open points a verdict assumes, and why
 * MUST checks were skipped. The engine, observe, property runs and the reporters all judge through
 * here, so one policy decides every verdict.
 */
import { bindsSide, type Rule } from '../core/rules.js';
import type { CheckResult, Finding, Status, Target } from './types.js';

/** A failure's weight: `failed` or `warning`, and, when a MUST was found but binds the other party, why it only warns. */
interface FailureVerdict {
  status: 'failed' | 'warning';
  /** Why MUST rules did not fail the run: they oblige the other party, not the target. */
  why?: string;
}

/**
 * The one place a failure gets its weight. A finding fails only a MUST rule that binds the target
 * of the run (spec/rules.yaml `binds`); SHOULD and U-* rules warn unless `strict`. A failure whose
 * MUST rules all bind the other party (the runner's own receiver, a merchant's duty seen from the
 * service side) is a warning that names them, even under `strict`: no reading makes it the
 * target's duty. Without `side` every rule binds the target.
 */
export function judgeFailure(
  ruleIds: string[],
  rules: Map<string, Rule>,
  strict: boolean,
  side?: Target['side'],
): FailureVerdict {
  // A rule outside the catalog binds whoever runs: it cannot be shown to be another party's.
  const binds = (id: string) => {
    const rule = rules.get(id);
    return !side || !rule || bindsSide(rule, side);
  };
  const own = ruleIds.filter(binds);
  if (own.some((id) => rules.get(id)?.severity === 'MUST')) return { status: 'failed' };
  if (strict && own.length > 0) return { status: 'failed' };
  const others = ruleIds.filter((id) => !binds(id) && rules.get(id)?.severity === 'MUST');
  if (others.length === 0) return { status: strict ? 'failed' : 'warning' };
  const party = side === 'service' ? 'merchant' : 'service';
  return {
    status: 'warning',
    why: `${others.join(', ')} ${others.length === 1 ? 'binds' : 'bind'} the ${party}, not the ${side} under test`,
  };
}

/**
 * The rules a finding is judged under: its own when the check knows them (a wrong key is CRYPTO-SAME,
 * not ENERGY-RES), else the expectation's labels. Labels never hide a MUST: an expectation labelled
 * with open points only (U-LIMITS) widens what the check accepts (a refusal warns), but a finding
 * that names a MUST (data that does not open) stands under it.
 */
export function judgedRules(finding: Finding, labels: string[]): string[] {
  return finding.status === 'failed' && finding.rules?.length ? finding.rules : labels;
}

/** A finding's verdict in a result: its status and message (a warning says why), under `judgedRules`. */
export function judgeFinding(
  finding: Finding,
  labels: string[],
  rules: Map<string, Rule>,
  strict: boolean,
  side: Target['side'],
): { status: Status; message: string } {
  if (finding.status !== 'failed') return { status: finding.status, message: finding.message };
  const verdict = judgeFailure(judgedRules(finding, labels), rules, strict, side);
  return {
    status: verdict.status,
    message: verdict.why ? `${finding.message} (a warning: ${verdict.why})` : finding.message,
  };
}

/** The severity a failure of these rules has: MUST fails, SHOULD and U-* warn (unless strict); see judgeFailure. */
export function failureStatus(
  ruleIds: string[],
  rules: Map<string, Rule>,
  strict: boolean,
  side?: Target['side'],
): Status {
  return judgeFailure(ruleIds, rules, strict, side).status;
}

/** The U-* rules among `ruleIds`, with their text: what a verdict assumes where the interface is silent. */
export function assumptionsOf(ruleIds: string[], rules: Map<string, Rule>) {
  return ruleIds.filter((id) => id.startsWith('U-')).map((id) => ({ rule: id, text: rules.get(id)?.text ?? '' }));
}

/**
 * The reason a skipped check gives, as one group of the summary: a cause reported once by another
 * check of its step names that check and its message, the group says only that; observe's
 * aggregates lose their count and seq span, and the event, withdrawal and delivery they name.
 */
function skipReason(message: string): string {
  if (/^not judged: .*\(the cause is reported once, by [^,]+, under /.test(message))
    return 'not judged: its cause is reported once, by another check of its step';
  return message
    .replace(/^\d+ judgements?(?: \(seq [^)]*\))?: /, '')
    .replace(/\b(event|withdrawal) (?=[^\s,;:()]*[\d-])[^\s,;:()]+/g, '$1 …')
    .replace(/\b\d+ s after delivery \d+\b/g, '… s after a delivery');
}

/** Why MUST checks were skipped, most frequent first, for the summary ("add --probe-url or --probe-cmd"). */
export function skipNotes(results: CheckResult[], rules: Map<string, Rule>): { skippedMust: number; notes: string[] } {
  const reasons = new Map<string, number>();
  let skippedMust = 0;
  for (const result of results) {
    if (result.status !== 'skipped' || !result.rules.some((id) => rules.get(id)?.severity === 'MUST')) continue;
    skippedMust++;
    const reason = skipReason(result.message);
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }
  const notes = [...reasons]
    .sort((one, other) => other[1] - one[1])
    .map(([reason, n]) => `${n} MUST check${n === 1 ? '' : 's'} skipped: ${reason}`);
  return { skippedMust, notes };
}

/**
 * The MUST checks a run did not judge, grouped by why, most frequent first: the skipped ones (a
 * capability not given, a run cut short) and those a fault that is not the target's kept from
 * judging (the setup's, the suite's, the toolkit's: exit 2).
 */
export function notJudged(
  results: readonly CheckResult[],
  rules: Map<string, Rule>,
): { count: number; groups: Array<{ reason: string; count: number }> } {
  const reasons = new Map<string, number>();
  let count = 0;
  for (const result of results) {
    if (
      !(result.status === 'skipped' || result.fault) ||
      !result.rules.some((id) => rules.get(id)?.severity === 'MUST')
    )
      continue;
    count++;
    const reason = skipReason(result.message);
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }
  const groups = [...reasons].sort((one, other) => other[1] - one[1]).map(([reason, n]) => ({ reason, count: n }));
  return { count, groups };
}
