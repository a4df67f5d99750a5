/**
 * The judgement of a target that stopped answering because of what the run sent: one failed result,
 * blamed on the case whose input it stopped after, with that input as evidence.
 */
import type { Rule } from '../core/rules.js';
import { bodyExcerpt } from '../net/run-session.js';
import { evidenceOf } from './evidence.js';
import type { Exchange } from './observation.js';
import type { CheckResult, Target } from './types.js';

/** An exchange of the run with the case that sent it: the trail a stopped target is judged from. */
export interface Sent {
  suite: string;
  case: string;
  exchange: Exchange;
}

/** The rules a case's checks are judged under; with `next`, those of the case after it. */
type CaseRules = (suite: string, id: string, next?: boolean) => string[];

/** The last input the target received, in one line: request, body excerpt and what came back. */
function describeInput(last: Sent | undefined): string {
  const request = last?.exchange.request;
  if (!request || !last) return 'none recorded';
  const body = request.plain === undefined ? ` with body ${bodyExcerpt(request.body)}` : '';
  const answer = last.exchange.response
    ? `answered HTTP ${last.exchange.response.status}`
    : `no answer: ${last.exchange.error ?? 'none'}`;
  return `${request.method} ${request.url}${body} (${answer})`;
}

/**
 * The result of a target that stopped answering because of what the run sent: failed, under
 * CB-AVAILABLE for a merchant and the MUST rules of the case whose input it stopped after (when that
 * case names none, those of the next case, which a target that answers nothing cannot pass); the
 * last input it received before the first refused request is the evidence. `refusal` is the error
 * of that refused request. With `setUp` (the requests of the run's set-up), it stopped before the
 * first case. Returns the result and the case to blame.
 */
export function stoppedAnswering(
  trail: readonly Sent[],
  side: Target['side'],
  refusal: string,
  running: { suite: string; case: string },
  caseRules: CaseRules,
  rules: Map<string, Rule>,
  setUp?: readonly string[],
): { result: CheckResult; after: string } {
  const at = trail.findIndex((sent) => sent.exchange.error === refusal);
  const refused = at < 0 ? trail.length : at;
  const last = trail.slice(0, refused).at(-1);
  const culprit = last ? { suite: last.suite, case: last.case } : running;
  const must = (ids: string[]) => ids.filter((id) => rules.get(id)?.severity === 'MUST');
  const own = must(caseRules(culprit.suite, culprit.case));
  const musts = own.length > 0 ? own : must(caseRules(culprit.suite, culprit.case, true));
  const ruleIds = [...new Set([...(side === 'merchant' ? ['CB-AVAILABLE'] : []), ...musts])];
  const after = `${culprit.suite}/${culprit.case}`;
  const who = side === 'merchant' ? 'The merchant' : 'The service';
  // Failed even when only a SHOULD is named: a target that no longer answers fails every MUST that follows.
  const failed = {
    id: 'target-stopped',
    suite: culprit.suite,
    case: culprit.case,
    rules: ruleIds,
    status: 'failed' as const,
  };
  if (setUp)
    return {
      after,
      result: {
        ...failed,
        title: `${who} keeps answering after the run's set-up (the control API probe and pre-flight)`,
        message:
          `the ${side} stopped answering before the first case, during the run's set-up (the control API probe and pre-flight) (${refusal}); ` +
          `the last requests the run sent it: ${setUp.length > 0 ? setUp.join('; ') : 'none recorded'}; no case was run`,
      },
    };
  return {
    after,
    result: {
      ...failed,
      title: `${who} keeps answering after this case's input`,
      message: `the ${side} stopped answering after case ${after} (${refusal}); the last input it received: ${describeInput(last)}; the cases left were not run`,
      evidence: evidenceOf(trail.slice(Math.max(0, refused - 3), refused + 1).map((sent) => sent.exchange)),
    },
  };
}
