import type { CheckResult, Report } from '../runner/types.js';

/** Failures that follow from one cause: what they share, what to do when it is known, and the failures. */
interface CauseGroup {
  /** A stable key of the group (`form-body`, `cause:no-answer`, `family:…`). */
  key: string;
  /** What the failures share, in words ("the body was read as a form field"). */
  cause: string;
  /** What to do, only when the report proves the cause (never a guess at the user's configuration). */
  fix?: string;
  /** How the cause is known: the pre-flight step or the evidence that shows it. */
  proof?: string;
  /** The rules the group's failures name, in order of first appearance. */
  rules: string[];
  results: CheckResult[];
}

/** The finding causes of the checks, in words. */
const CAUSE_WORDS: Record<string, string> = {
  'no-answer': 'the target gave no answer',
  'undecryptable-answer': "the answers' data does not decrypt with the merchant's key",
  'undecryptable-callback': 'the callbacks do not decrypt with the public key',
  'no-callback': "no callback arrived at the runner's receiver",
  'malformed-card-response': 'the card-close answers do not have the documented shape',
};

/** Ids, numbers, quoted text and JSON bodies out of a message: what is left names the kind of failure. */
function messageFamily(message: string): string {
  return message
    .replace(/ \(with both [^)]*\)/g, '')
    .replace(/^delivery \d+\/\d+: /, '')
    .replace(/\{.*\}/g, '{…}')
    .replace(/"[^"]*"/g, '"…"')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, 'ID')
    .replace(/wc-[\w-]+/g, 'ID')
    .replace(/\b(expected) \d+ (processing)/g, '$1 N $2')
    .replace(/\(errCode [^)]*\)/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** A valid callback refused (answered, not acknowledged) or not processed: what a receiver that cannot open callbacks shows. */
function refusedOrUnprocessed(result: CheckResult): boolean {
  return (
    /^(delivery \d+\/\d+: )?expected HTTP 200, got \d+/.test(result.message) ||
    /the probe shows 0\b|^nothing was processed/.test(result.message)
  );
}

interface Delivery {
  body: string;
  status?: number;
}

function deliveriesOf(result: CheckResult): Delivery[] {
  const list = result.evidence?.exchanges;
  if (!Array.isArray(list)) return [];
  return list.flatMap(
    (exchange: { request?: { method?: unknown; body?: unknown }; response?: { status?: unknown } | null }) => {
      const body = exchange.request?.body;
      if (exchange.request?.method !== 'POST' || typeof body !== 'string' || !/^[A-Za-z0-9+/=]+$/.test(body)) return [];
      return [{ body, ...(typeof exchange.response?.status === 'number' ? { status: exchange.response.status } : {}) }];
    },
  );
}

/**
 * Is a form-reading receiver proven? By pre-flight (a callback without '+' acknowledged where one
 * with '+' was not), or by the report's own evidence: every Base64 callback body of the refused
 * valid deliveries holds a '+', and a passing case's callback without one was answered HTTP 200 or
 * the runner's form-field body (data=…) was processed.
 */
function formReadingProof(report: Report, refused: CheckResult[]): string | undefined {
  const step = report.preflight?.steps.find((s) => /reads the body as a form/.test(s.conclusion));
  if (step) return `pre-flight: ${step.what}: ${step.observed}`;
  if (report.target.side !== 'merchant') return undefined;
  const bad = refused.flatMap(deliveriesOf).filter((d) => d.status !== undefined && d.status !== 200);
  if (bad.length < 2 || !bad.every((d) => d.body.includes('+'))) return undefined;
  const good = report.results
    .filter((r) => r.status === 'passed')
    .flatMap(deliveriesOf)
    .find((d) => d.status === 200 && !d.body.includes('+'));
  if (good)
    return `each of the ${bad.length} refused callbacks shown holds a '+' in its Base64 body; a callback without one was answered HTTP 200 (a form decoder turns '+' into a space)`;
  // The runner's form-field body (data=<Base64>) opens only for a receiver that reads a form.
  const form = report.results.find(
    (r) =>
      r.suite === 'merchant/raw-body' &&
      r.case === 'form-field-body' &&
      r.status !== 'passed' &&
      /the probe shows [1-9]|answered errCode 0/.test(r.message),
  );
  if (form)
    return `each of the ${bad.length} refused callbacks shown holds a '+' in its Base64 body, and the merchant processed a body sent as the form field data=… (${form.id})`;
  return undefined;
}

function group(
  key: string,
  cause: string,
  results: CheckResult[],
  extra: { fix?: string; proof?: string } = {},
): CauseGroup {
  return {
    key,
    cause,
    ...(extra.fix ? { fix: extra.fix } : {}),
    ...(extra.proof ? { proof: extra.proof } : {}),
    rules: [...new Set(results.flatMap((r) => r.rules))],
    results,
  };
}

/**
 * The failures of a report grouped by root cause, largest group first: a cause proven by
 * pre-flight or the evidence (a receiver that reads the body as a form field), the finding's own
 * `cause`, a target that stopped answering, then failures whose messages are of one family. A
 * group of one is just that failure.
 */
export function groupFailures(report: Report, status: 'failed' | 'warning' = 'failed'): CauseGroup[] {
  let left = report.results.filter((r) => r.status === status);
  const groups: CauseGroup[] = [];
  const take = (pick: (r: CheckResult) => boolean) => {
    const taken = left.filter(pick);
    left = left.filter((r) => !pick(r));
    return taken;
  };
  // A receiver reading a form field refuses (or never processes) every callback whose Base64 holds a '+'.
  const refused = left.filter((r) => r.suite.startsWith('merchant/') && refusedOrUnprocessed(r));
  const proof = refused.length > 0 ? formReadingProof(report, refused) : undefined;
  if (proof) {
    const set = new Set(refused);
    groups.push(
      group(
        'form-body',
        "the body was read as a form field (a '+' in the Base64 became a space)",
        take((r) => set.has(r)),
        {
          fix: 'read the raw request body as the Base64 text, before any form or JSON parser (CB-RAW-BODY)',
          proof,
        },
      ),
    );
  }
  const stopped = take((r) => r.id.endsWith('/target-stopped'));
  if (stopped.length > 0)
    groups.push(group('target-stopped', "the target stopped answering under the run's input", stopped));
  const byCause = new Map<string, CheckResult[]>();
  for (const r of take((r) => r.cause !== undefined)) byCause.set(r.cause!, [...(byCause.get(r.cause!) ?? []), r]);
  for (const [cause, results] of byCause) groups.push(group(`cause:${cause}`, CAUSE_WORDS[cause] ?? cause, results));
  const byFamily = new Map<string, CheckResult[]>();
  for (const r of left) {
    const family = messageFamily(r.message);
    byFamily.set(family, [...(byFamily.get(family) ?? []), r]);
  }
  for (const [family, results] of byFamily)
    groups.push(group(`family:${family}`, results.length > 1 ? family : results[0]!.message, results));
  return groups.sort((a, b) => b.results.length - a.results.length);
}

/**
 * A group's heading: "43 failures share one cause: …: fix" for a known cause, "12 failures show one
 * symptom: …" for a family of messages, the failure itself for a group of one.
 */
export function groupHeading(group: CauseGroup, noun = 'failures'): string {
  const fix = group.fix ? `: ${group.fix}` : '';
  const one = group.results[0]!;
  if (group.results.length === 1)
    return `${one.id}: ${group.key.startsWith('family:') || group.key.startsWith('cause:') ? one.message : group.cause}${fix}`;
  return `${group.results.length} ${noun} ${group.key.startsWith('family:') ? 'show one symptom' : 'share one cause'}: ${group.cause}${fix}`;
}
