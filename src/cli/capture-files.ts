// The files of `observe --capture`: one new file, or a rotating series (--capture-max-mb,
// --capture-keep); and the files `observe --replay` reads (several, or a glob, in order).
import { createWriteStream, existsSync, openSync, readdirSync, unlink, type WriteStream } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { finished } from 'node:stream';
import { ConfigError } from '../core/errors.js';
import type { CaptureSink } from '../observe/capture.js';
import type { LiveCapture } from '../observe/live.js';

/** The name of the `index`-th file of a rotating capture: `traffic.jsonl` → `traffic.000001.jsonl` (names sort in order). */
function segmentName(path: string, index: number): string {
  const extension = extname(path);
  const stem = extension === '' ? path : path.slice(0, -extension.length);
  return `${stem}.${String(index).padStart(6, '0')}${extension}`;
}

/** Opens a new file (never an existing one) synchronously: a rotation between two lines loses no line to an open in flight. */
function openNew(path: string): WriteStream {
  const fd = openSync(path, 'wx', 0o600);
  return createWriteStream(path, { fd });
}

/** How long after a failed file a new one is tried. */
const RETRY_MS = 10_000;

interface RotationOptions {
  /** A file is closed and the next one begun once a line would take it past this many bytes. */
  maxBytes?: number;
  /** ... or once it has been open this long (ms), at its next line. */
  maxAgeMs?: number;
  /** Clock of file ages (default Date.now). */
  now?: () => number;
  /** Files kept at most (the oldest are deleted); undefined keeps them all. */
  keep?: number;
  /** How long after a failure a new file is tried (default 10 s). */
  retryMs?: number;
  /** One line for a problem while rotating or writing (a full disk): the proxy goes on forwarding. */
  onProblem: (line: string) => void;
}

/**
 * A capture written as a series of files, each a whole capture of its own (lines are never split,
 * `seq` goes on increasing across files). Rotation happens between two lines. A file that cannot
 * be opened or written (a full disk) is one line through `onProblem`; lines are then dropped
 * (counted by the writer as the disk falling behind) and the next line tries a new file.
 */
export class RotatingCaptureSink implements CaptureSink {
  /** Files written, in order (the kept ones and the deleted ones). */
  readonly files: string[] = [];
  private current: WriteStream | undefined;
  private size = 0;
  private readonly closing = new Set<WriteStream>();
  private failing = false;
  private retryAt = 0;
  private openedAt = 0;
  private readonly clock: () => number;
  /** The number of the last file name tried. */
  private index = 0;
  /** Files on disk that --capture-keep may delete, oldest first. */
  private readonly kept: string[] = [];

  private constructor(
    private readonly path: string,
    private readonly options: RotationOptions,
  ) {
    this.clock = options.now ?? Date.now;
  }

  /** Opens the first file; a first file that exists already is refused (an earlier capture is not overwritten). */
  static open(path: string, options: RotationOptions): RotatingCaptureSink {
    const sink = new RotatingCaptureSink(path, options);
    const first = segmentName(path, ++sink.index);
    if (existsSync(first))
      throw new ConfigError(
        'file-exists',
        `--capture ${first} exists already: name a new file (an earlier capture is not overwritten)`,
      );
    try {
      sink.begin(first);
    } catch (error) {
      throw new ConfigError(
        'unwritable-file',
        `cannot write --capture ${first}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
    return sink;
  }

  private begin(file: string): void {
    const stream = openNew(file);
    this.files.push(file);
    this.kept.push(file);
    this.current = stream;
    this.size = 0;
    this.openedAt = this.clock();
    stream.on('error', (error: NodeJS.ErrnoException) => {
      this.problem(`cannot write ${file}: ${error.code ?? error.message}`);
      if (this.current === stream) this.current = undefined;
      this.closing.delete(stream);
    });
    this.prune();
  }

  /** One line per run of failures (a full disk is said once, not per line), again after a file was written. */
  private problem(what: string): void {
    // A new file is tried again only after a pause: a full disk must not get an empty file per line.
    this.retryAt = Date.now() + (this.options.retryMs ?? RETRY_MS);
    if (this.failing) return;
    this.failing = true;
    this.options.onProblem(
      `observe: capture: ${what}; lines are dropped until a new file can be written (forwarding goes on)`,
    );
  }

  get writableLength(): number {
    let length = this.current?.writableLength ?? 0;
    for (const stream of this.closing) length += stream.writableLength;
    return length;
  }

  write(chunk: string): boolean {
    const bytes = Buffer.byteLength(chunk);
    const { maxBytes, maxAgeMs } = this.options;
    const full = maxBytes !== undefined && this.size + bytes > maxBytes;
    const old = maxAgeMs !== undefined && this.clock() - this.openedAt >= maxAgeMs;
    if (this.current && this.size > 0 && (full || old)) this.retire();
    if (!this.current) {
      if (Date.now() < this.retryAt) return false;
      // A name that could not be opened is passed over: the next try takes the next name.
      const next = segmentName(this.path, ++this.index);
      try {
        this.begin(next);
      } catch (error) {
        this.problem(`cannot open ${next}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
        return false;
      }
    }
    this.size += bytes;
    return this.current!.write(chunk);
  }

  private retire(): void {
    const old = this.current!;
    this.current = undefined;
    this.closing.add(old);
    old.end();
    finished(old, (error) => {
      this.closing.delete(old);
      // A file written whole: a later failure is news again.
      if (!error) this.failing = false;
    });
  }

  private prune(): void {
    const keep = this.options.keep;
    if (keep === undefined) return;
    while (this.kept.length > keep) {
      const file = this.kept.shift()!;
      unlink(file, (error) => {
        if (error)
          this.options.onProblem(
            `observe: capture: cannot delete ${file} (--capture-keep): ${error.code ?? error.message}`,
          );
      });
    }
  }

  end(callback: () => void): void {
    const streams = [...this.closing, ...(this.current ? [this.current] : [])];
    let open = streams.length;
    if (open === 0) return callback();
    // finished() calls back on an error too: a file the disk refused never holds the stop up.
    for (const stream of streams) {
      stream.end();
      finished(stream, () => {
        if (--open === 0) callback();
      });
    }
  }
}

/** A glob's one path segment (`*`, `?`) as a regular expression. */
function globPattern(name: string): RegExp {
  return new RegExp(
    `^${name
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );
}

/**
 * The files of `--replay`, in order: each argument as given, a glob in its file name (`*`, `?`)
 * expanded to the matching files sorted by name with numbers read as numbers (a rotated
 * capture's files in the order they were written). A glob that matches nothing is refused.
 */
export function replayFiles(args: readonly string[]): string[] {
  const out: string[] = [];
  for (const arg of args) {
    const name = basename(arg);
    if (!/[*?]/.test(name)) {
      out.push(arg);
      continue;
    }
    const folder = dirname(arg);
    const pattern = globPattern(name);
    let entries: string[];
    try {
      entries = readdirSync(folder);
    } catch (error) {
      throw new ConfigError(
        'unreadable-file',
        `cannot read --replay ${arg}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
    const matched = entries
      .filter((entry) => pattern.test(entry))
      .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    if (matched.length === 0) throw new ConfigError('unreadable-file', `--replay ${arg} matches no file`);
    out.push(...matched.map((entry) => (folder === '.' && !arg.startsWith('./') ? entry : join(folder, entry))));
  }
  return out;
}

/** Opens the capture file, refusing to overwrite an earlier capture (real traffic is not thrown away by a rerun). */
async function openCaptureFile(path: string): Promise<WriteStream> {
  if (existsSync(path))
    throw new ConfigError(
      'file-exists',
      `--capture ${path} exists already: name a new file (an earlier capture is not overwritten)`,
    );
  const stream = createWriteStream(path, { flags: 'wx', mode: 0o600 });
  await new Promise<void>((resolveOpen, reject) => {
    stream.once('open', () => resolveOpen());
    stream.once('error', (error: NodeJS.ErrnoException) =>
      reject(new ConfigError('unwritable-file', `cannot write --capture ${path}: ${error.code ?? error.message}`)),
    );
  });
  return stream;
}

/** Opens --capture: one new file, or the first of a rotating series (`rotation`, from --capture-max-mb and the like). */
export async function openCapture(
  path: string | undefined,
  rotation: Pick<RotationOptions, 'maxBytes' | 'maxAgeMs' | 'keep'> | undefined,
  onProblem: (line: string) => void,
): Promise<LiveCapture | undefined> {
  if (path === undefined) return undefined;
  if (rotation === undefined) return { path, sink: await openCaptureFile(path) };
  const rotating = RotatingCaptureSink.open(path, { ...rotation, onProblem });
  return { path, sink: rotating, rotating };
}
