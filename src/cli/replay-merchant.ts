import { readCaptureFile } from '../observe/capture.js';
import { createJudge } from '../observe/judge.js';
import { replayCallbacks, type ReplayCounts } from '../observe/replay.js';
import type { RunEvent } from '../runner/engine.js';
import type { MerchantTarget, Report } from '../runner/types.js';
import { loadRules } from './report-output.js';

/**
 * `verify merchant --replay FILE`: resends the captured callbacks of an observe capture to the
 * merchant (src/observe/replay.ts) and judges its answers with the observe judge, the merchant's
 * side only (the service's bytes are the capture's, not under test). Returns the report.
 */
export async function replayMerchant(
  target: MerchantTarget,
  file: string,
  options: { strict: boolean; onEvent: (event: RunEvent) => void },
): Promise<Report> {
  const privateKeyPem = target.privateKey.keyObject.export({ type: 'pkcs8', format: 'pem' }).toString();
  const judge = createJudge({
    keys: { privateKeyPem, apiKey: target.apiKey },
    strict: options.strict,
    profile: target.profile,
    rules: loadRules(),
    sides: ['merchant'],
    target: { replay: file, callbackUrl: target.callbackUrl },
  });
  const counts: ReplayCounts = { read: 0, replayed: 0, otherKey: 0, secretHeader: 0 };
  const warnings: string[] = [];
  // Every line is checked before the first delivery leaves: a bad line is exit 2 with nothing sent.
  for await (const exchange of readCaptureFile(file, { onWarning: (line) => warnings.push(line) })) void exchange;
  options.onEvent({ kind: 'start', total: 0, side: 'merchant' });
  let stopped: string | undefined;
  try {
    for await (const exchange of replayCallbacks(
      readCaptureFile(file),
      {
        callbackUrl: target.callbackUrl,
        apiKey: target.apiKey,
        ...(target.transport ? { transport: target.transport } : {}),
      },
      counts,
    )) {
      for (const result of judge.accept(exchange)) options.onEvent({ kind: 'result', result });
    }
  } catch (error) {
    // The file changed or went away after it was checked: what was replayed is still judged and reported.
    stopped = `the replay stopped early: ${(error as Error).message}`;
  }
  const { report } = judge.finish();
  report.target = { ...report.target, side: 'merchant' };
  report.notes = [
    `replayed ${counts.replayed} captured callback deliver${counts.replayed === 1 ? 'y' : 'ies'} of ${counts.read} captured exchange(s) from ${file}`,
    ...warnings,
    ...(stopped ? [stopped] : []),
    ...(counts.otherKey > 0
      ? [
          `${counts.otherKey} deliver${counts.otherKey === 1 ? 'y carries' : 'ies carry'} a key that is not the run's --api-key (a capture holds only its fingerprint): not replayed`,
        ]
      : []),
    ...(counts.secretHeader
      ? [
          `${counts.secretHeader} deliver${counts.secretHeader === 1 ? 'y carries' : 'ies carry'} another secret header (Authorization, Cookie, ...) that a capture holds only as a fingerprint: not replayed (a limit of the capture, not a finding against the merchant)`,
        ]
      : []),
    ...(report.notes ?? []),
  ];
  options.onEvent({ kind: 'done', report });
  return report;
}
