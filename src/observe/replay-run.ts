// `observe --replay`: capture files judged offline, in order, as the live run would have judged them.
import { MESSAGE_PREFIX } from '../core/errors.js';
import { readCaptureFile } from './capture.js';
import { conclude, findingPrinter, type ObserveIo } from './conclude.js';
import type { Judge } from './exchange.js';

/** Judges the exchanges of `files` (checked readable by the CLI) on this thread; returns the exit status. */
export async function observeReplay(
  files: readonly string[],
  judge: Judge,
  apiKey: string | undefined,
  io: ObserveIo,
): Promise<number> {
  const printer = findingPrinter(io);
  const onWarning = (line: string) => io.err(io.scrubber.text(`${MESSAGE_PREFIX} observe: ${line}\n`));
  for (const file of files)
    for await (const exchange of readCaptureFile(file, { ...(apiKey === undefined ? {} : { apiKey }), onWarning }))
      printer.print(judge.accept(exchange));
  return conclude(judge.finish(), io, printer, { observe: { replay: files.length === 1 ? files[0] : files } }, []);
}
