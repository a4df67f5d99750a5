// The manual is tested like code:
// - every shell block (```sh, ```bash, ```shell, ```console) of README.md and docs/**/*.md runs, in
//   a fresh folder, against the built CLI (`npx wallet-conformance` and `wallet-conformance` both
//   mean bin/wallet-conformance.js), with its fixed loopback ports (8080, 9400, 9401) swapped for free
//   ones, and must exit 0. A block that cannot run here says so right above it, visibly:
//   `<!-- not run: the reason -->`; they are counted and listed, and their number is capped.
// - every relative link of every Markdown file in the repository resolves (the file, and the
//   heading of a `#fragment` in a Markdown file), and so does every link of a shipped Markdown file
//   inside the packed package (`npm pack --dry-run`): a shipped page never points at an unshipped file;
// - no source file (src, test, bench, examples, bin) nor page of the manual cites a document the
//   repository does not hold.
import { spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, relative, resolve, sep } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';
import { freePort } from './support/ports.js';
import { limit } from './support/limit.js';

/** At most this many shell blocks may be marked `not run` (each with its reason). */
const MAX_NOT_RUN = 9;
/** The fixed loopback ports the manual's blocks use; each run gets free ones instead. */
const BLOCK_PORTS = [8080, 9400, 9401];
const SKIP_DIRS = new Set(['node_modules', 'dist', 'reports', '.git', 'coverage']);

const posix = (path: string) => path.split(sep).join('/');

function walk(dir: string, keep: (file: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory())
      return SKIP_DIRS.has(entry.name) || entry.name.startsWith('.') ? [] : walk(join(dir, entry.name), keep);
    const file = join(dir, entry.name);
    return keep(file) ? [file] : [];
  });
}

/** README.md and docs/**: the manual, whose shell blocks run. */
const MANUAL = [join(ROOT, 'README.md'), ...walk(join(ROOT, 'docs'), (file) => file.endsWith('.md'))];
/** Every Markdown file of the repository, whose links must resolve. */
const MARKDOWN = walk(ROOT, (file) => file.endsWith('.md'));

interface ShellBlock {
  where: string;
  code: string;
  notRun?: string;
}

/** The shell blocks of a Markdown file, with the `not run` reason written above one. */
function shellBlocks(file: string): ShellBlock[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const blocks: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const end = lines.findIndex((line, j) => j > i && /^```\s*$/.test(line));
    if (end < 0) throw new Error(`${relative(ROOT, file)}:${i + 1}: a code block that never closes`);
    if (['sh', 'bash', 'shell', 'console'].includes(open[1]!)) {
      const body = lines.slice(i + 1, end);
      const code =
        open[1] === 'console'
          ? body
              .filter((line) => line.startsWith('$ '))
              .map((line) => line.slice(2))
              .join('\n')
          : body.join('\n');
      const above =
        lines
          .slice(0, i)
          .reverse()
          .find((line) => line.trim() !== '') ?? '';
      const marker = /^<!-- not run: (.+?) -->$/.exec(above.trim());
      if (/^<!--\s*not run/.test(above.trim()) && !marker)
        throw new Error(`${relative(ROOT, file)}:${i}: a "not run" marker needs a reason: <!-- not run: why -->`);
      blocks.push({
        where: `${posix(relative(ROOT, file))}:${i + 1}`,
        code,
        ...(marker ? { notRun: marker[1]! } : {}),
      });
    }
    i = end;
  }
  return blocks;
}

const BLOCKS = MANUAL.flatMap(shellBlocks);
const RUNNABLE = BLOCKS.filter((block) => block.notRun === undefined);
const NOT_RUN = BLOCKS.filter((block) => block.notRun !== undefined);

const PRELUDE = `set -eo pipefail
command -v curl >/dev/null || { echo "docs harness: the manual's blocks need curl" >&2; exit 97; }
# In a subshell (a block's \`cmd &\`, a pipe) the CLI replaces it, so \`$!\` is the CLI's pid as with a real binary.
wallet-conformance() { if [ "$BASHPID" != "$$" ]; then exec node "$WC_BIN" "$@"; else node "$WC_BIN" "$@"; fi; }
npx() { if [ "$1" = wallet-conformance ]; then shift; wallet-conformance "$@"; else echo "docs harness: npx $1 is not available here" >&2; return 127; fi; }
`;

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** Distinct free loopback ports, one per fixed port of the manual. */
async function portMap(): Promise<Map<number, number>> {
  const taken = new Set<number>();
  const map = new Map<number, number>();
  for (const fixed of BLOCK_PORTS) {
    let port = await freePort();
    while (taken.has(port)) port = await freePort();
    taken.add(port);
    map.set(fixed, port);
  }
  return map;
}

/** At most this many blocks at once: each starts servers and a CLI on a machine other tests share. */
const PARALLEL = 3;
const limited = limit(PARALLEL);

/** Runs a block in its own folder and process group; every process it left behind is stopped after. */
async function runBlock(block: ShellBlock): Promise<{ status: number | null; log: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'wc-manual-'));
  folders.push(dir);
  let code = block.code;
  for (const [fixed, port] of await portMap()) code = code.replace(new RegExp(`\\b${fixed}\\b`, 'g'), String(port));
  writeFileSync(join(dir, 'block.sh'), PRELUDE + code + '\n');
  const logPath = join(dir, 'block.log');
  const log = openSync(logPath, 'w');
  const env: Record<string, string | undefined> = {
    ...process.env,
    NO_COLOR: '1',
    WC_BIN: join(ROOT, 'bin/wallet-conformance.js'),
  };
  for (const name of Object.keys(env))
    if (/^(WALLET_|PACT_BROKER_|HTTPS?_PROXY|ALL_PROXY)/i.test(name)) delete env[name];
  const child = spawn('bash', ['block.sh'], { cwd: dir, env, detached: true, stdio: ['ignore', log, log] });
  closeSync(log);
  const status = await new Promise<number | null>((done) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    child.on('exit', (exitCode) => {
      clearTimeout(timer);
      done(exitCode);
    });
  });
  try {
    process.kill(-child.pid!, 'SIGTERM'); // the servers a block started with `&`
  } catch {
    // the group is gone already
  }
  return { status, log: readFileSync(logPath, 'utf8'), dir };
}

describe('shell blocks of README.md and docs/', () => {
  it(`are each run, or marked not run with a reason (at most ${MAX_NOT_RUN})`, () => {
    console.info(
      `manual: ${RUNNABLE.length} shell blocks run, ${NOT_RUN.length} not run:\n${NOT_RUN.map((block) => `  ${block.where}: ${block.notRun}`).join('\n')}`,
    );
    expect(RUNNABLE.length).toBeGreaterThan(5);
    expect(NOT_RUN.length, NOT_RUN.map((block) => block.where).join(', ')).toBeLessThanOrEqual(MAX_NOT_RUN);
  });

  it('fail a block whose command fails, and stop what a block left running', async () => {
    const failing = await runBlock({
      where: 'harness',
      code: 'npx wallet-conformance crypto decrypt --direction callback --public-key missing.pem < /dev/null\necho not reached',
    });
    expect(failing.status).not.toBe(0);
    expect(failing.log).toMatch(/^wallet-conformance: .*missing\.pem/m);
    expect(failing.log).not.toContain('not reached');
    const left = await runBlock({
      where: 'harness',
      code: 'npx wallet-conformance emulator --port 8080 > emulator.log &\necho $! > server.pid\nuntil curl -so /dev/null http://127.0.0.1:8080/; do sleep 0.2; done',
    });
    expect(left.status, left.log).toBe(0);
    const pid = Number(readFileSync(join(left.dir, 'server.pid'), 'utf8'));
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 50 && alive(); i++) await new Promise((wait) => setTimeout(wait, 100));
    expect(alive(), 'the emulator the block started in the background is stopped with its group').toBe(false);
  }, 60_000);

  describe.concurrent('each runnable block exits 0', () => {
    it.each(RUNNABLE.map((block) => [block.where, block] as const))(
      '%s',
      async (_where, block) => {
        const { status, log } = await limited(() => runBlock(block));
        expect(status, `${block.code}\n--- output (last 4000 characters) ---\n${log.slice(-4000)}`).toBe(0);
      },
      400_000,
    ); // includes the wait for a free slot (PARALLEL at once)
  });
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as '-'. */
function slug(heading: string): string {
  return heading
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  let anchors = anchorCache.get(file);
  if (anchors) return anchors;
  anchors = new Set();
  let fence = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('```')) fence = !fence;
    const heading = fence ? null : /^#{1,6} (.+)$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    let name = base;
    for (let n = 1; anchors.has(name); n++) name = `${base}-${n}`;
    anchors.add(name);
  }
  anchorCache.set(file, anchors);
  return anchors;
}

/** The relative link targets of a Markdown file (outside code blocks and code spans). */
function linksOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
    .replace(/^```[\s\S]*?^```/gm, '')
    .replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z][a-z+.-]*:/i.test(target));
}

/** Where a link from `file` points, relative to the root, and its fragment. */
function resolveLink(file: string, target: string): { path: string; fragment: string } {
  const [path, fragment = ''] = target.split('#') as [string, string?];
  const absolute = path === '' ? file : normalize(resolve(dirname(file), decodeURI(path)));
  return { path: posix(relative(ROOT, absolute)), fragment };
}

describe('links', () => {
  it('resolve in the repository: every relative link of every Markdown file, and its #fragment', () => {
    const broken: string[] = [];
    for (const file of MARKDOWN) {
      for (const target of linksOf(file)) {
        const { path, fragment } = resolveLink(file, target);
        const where = `${posix(relative(ROOT, file))} → ${target}`;
        if (path.startsWith('..')) broken.push(`${where}: outside the repository`);
        else if (!existsSync(join(ROOT, path))) broken.push(`${where}: no such file`);
        else if (fragment && path.endsWith('.md') && !anchorsOf(join(ROOT, path)).has(fragment))
          broken.push(`${where}: no heading #${fragment}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('resolve inside the packed package: a shipped page links only to shipped files', () => {
    const pack = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(pack.status, pack.stderr).toBe(0);
    const shipped = new Set(
      (JSON.parse(pack.stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path),
    );
    const shippedDirs = new Set(
      [...shipped].flatMap((path) =>
        path
          .split('/')
          .slice(0, -1)
          .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
      ),
    );
    const pages = [...shipped].filter((path) => path.endsWith('.md'));
    expect(pages).toEqual(expect.arrayContaining(['README.md', 'docs/README.md', 'docs/merchant-guide.md']));
    const broken = pages.flatMap((page) =>
      linksOf(join(ROOT, page)).flatMap((target) => {
        const { path } = resolveLink(join(ROOT, page), target);
        if (shipped.has(path) || shippedDirs.has(path.replace(/\/$/, ''))) return [];
        return [`${page} → ${target}: not in the package`];
      }),
    );
    expect(broken).toEqual([]);
  });
});

describe('sources', () => {
  /** What cites a document of the development setup that the repository does not hold. */
  const FORBIDDEN =
    /\.\.\/shared\b|'\.\.', 'shared'|(?<![\w./-])(?:design|interface|style)\.md\b|(?<![\w./'"(-])rules\.md\b/;
  /** Tests that read such a file only where the development setup has it, and skip otherwise. */
  const ALLOWED: Record<string, string> = {
    'test/spec.test.ts': "compares spec/rules.yaml with the interface's rule list where the development setup has it",
    'test/report-cli.test.ts':
      'validates report.json against the common report contract where the development setup has it',
    'test/run.test.ts': 'validates report.json against the common report contract where the development setup has it',
    'test/shipped-references.test.ts': 'names the forbidden documents in order to forbid them',
    'test/manual.test.ts': 'names the forbidden documents in order to forbid them',
  };

  it('cite no document the repository does not hold (src, test, bench, examples, bin, and the manual)', () => {
    const files = [
      ...['src', 'test', 'bench', 'examples', 'bin'].flatMap((dir) =>
        walk(
          join(ROOT, dir),
          (file) => /\.(ts|js|mjs|cjs|py|java|sh|ya?ml|json|md)$/.test(file) && statSync(file).size < 2_000_000,
        ),
      ),
      ...MANUAL,
      join(ROOT, 'ARCHITECTURE.md'),
    ];
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap((file) => {
      const path = posix(relative(ROOT, file));
      if (ALLOWED[path]) return [];
      return readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => (FORBIDDEN.test(line) ? [`${path}:${i + 1}: ${line.trim()}`] : []));
    });
    expect(found).toEqual([]);
  });
});
