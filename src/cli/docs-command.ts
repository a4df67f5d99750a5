import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import type { Command } from 'commander';
import { ConfigError } from '../core/errors.js';
import { PACKAGE_ROOT, RULES_PATH, SPEC_PATH } from '../platform/package-paths.js';
import type { RsaPrivateKey } from '../crypto/keys.js';
import type { CardFailure } from '../service/codes.js';
// The spec, the rules, the suites, keys and the site's generator are imported by the action.

interface DocsFlags {
  out: string;
  spec: string;
  rules: string;
  suites?: string;
  demoKey?: string;
  publishPrivateKey?: string;
  profile?: string;
}

/** `docs [--out DIR]`: the offline documentation site (HTML and Markdown) from the spec, the rules and the suites. */
export function registerDocsCommand(program: Command): void {
  program
    .command('docs')
    .description(
      'render the documentation site (HTML and Markdown, works offline) from the spec, spec/rules.yaml and the suites',
    )
    .option('--out <dir>', 'folder of the site (its index.html and index.md)', join('reports', 'docs'))
    .option('--spec <file>', 'OpenAPI spec', SPEC_PATH)
    .option('--rules <file>', 'rule catalog', RULES_PATH)
    .option('--suites <dir>', 'suites folder, for the traceability table (default: the packaged suites)')
    .option(
      '--demo-key <file>',
      'private key that encrypts the examples (default: a fresh 1024-bit demo key, written next to the site)',
    )
    .option(
      '--publish-private-key <words>',
      `publish a --demo-key that is not marked as a demo key (keys generate --demo): say "I understand this key is public"`,
    )
    .option('--profile <file>', 'crypto profile YAML of the examples')
    .action(async (flags: DocsFlags) => {
      const { parseRuleCatalog } = await import('../core/rules.js');
      const { generateMerchantKeyPair } = await import('../crypto/key-pair.js');
      const { parseKey } = await import('../crypto/keys.js');
      const { CARD_ERROR_CODES, CARD_ERROR_TEXTS, ENVELOPE_CODES } = await import('../service/codes.js');
      const { idempotencyKey } = await import('../merchant/idempotency.js');
      const { CHECKS } = await import('../runner/checks/index.js');
      const { loadSuites } = await import('../runner/suite.js');
      const { assertPublishable, markDemoKey } = await import('./demo-key.js');
      const { loadKeyFile, loadProfile, loadSpecFile, readUserFile, writeUserFile } = await import('./io.js');
      const spec = loadSpecFile(flags.spec);
      const rules = parseRuleCatalog(readUserFile(flags.rules, 'rule catalog').toString('utf8'), flags.rules);
      const suites = flags.suites === undefined ? loadSuites() : loadSuites(suitesFolder(flags.suites));
      const key = (
        flags.demoKey
          ? loadKeyFile(flags.demoKey, 'private')
          : parseKey(generateMerchantKeyPair(1024).privatePem, { expect: 'private' })
      ) as RsaPrivateKey;
      // The site publishes the demo key's private half: only a demo key, or a key the user said may be public.
      if (flags.demoKey) assertPublishable(flags.demoKey, flags.publishPrivateKey);
      else if (flags.publishPrivateKey !== undefined) assertPublishable('', flags.publishPrivateKey);
      const { generateDocs, DOCS_INDEX } = await import('../generate/docs/site.js');
      const files = generateDocs(spec, rules, suites, {
        checks: CHECKS,
        demo: { key, profile: loadProfile(flags.profile) },
        businessCodes: Object.entries(ENVELOPE_CODES).map(([name, code]) => ({ code, name })),
        cardErrors: Object.entries(CARD_ERROR_CODES).map(([name, errorCode]) => ({
          errorCode,
          name,
          errorMessage: CARD_ERROR_TEXTS[name as CardFailure].zh,
          errorMessageEn: CARD_ERROR_TEXTS[name as CardFailure].en,
        })),
        idempotencyKey: (payload) => idempotencyKey(payload),
        manual: manualFiles(),
      });
      for (const file of files) {
        // The published private key is marked as a demo key, so it can be given back to --demo-key.
        const contents = file.path.endsWith('private.pem') ? markDemoKey(String(file.contents)) : file.contents;
        writeUserFile(join(flags.out, file.path), contents, {
          overwrite: true,
          mode: file.path.endsWith('private.pem') ? 0o600 : 0o644,
        });
      }
      const pages = files.filter((file) => file.path.endsWith('.html')).length;
      process.stdout.write(
        `docs: ${pages} HTML pages and ${pages} Markdown pages in ${flags.out}; open ${join(flags.out, DOCS_INDEX)}\n`,
      );
    });
}

/** `--suites DIR` must be a folder: a typo is a user error (exit 2), not an internal one. */
function suitesFolder(dir: string): string {
  let isFolder: boolean;
  try {
    isFolder = statSync(dir).isDirectory();
  } catch {
    throw new ConfigError('unreadable-file', `cannot read suites folder ${dir}: no such folder`);
  }
  if (!isFolder) throw new ConfigError('unreadable-file', `cannot read suites folder ${dir}: not a folder`);
  return resolve(dir);
}

/** The package's manual (README.md and docs/**\/*.md), rendered beside the reference; none where it is absent. */
function manualFiles(): Array<{ path: string; text: string }> {
  const files: string[] = [];
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) visit(join(dir, entry.name));
      else if (entry.name.endsWith('.md')) files.push(join(dir, entry.name));
    }
  };
  if (existsSync(join(PACKAGE_ROOT, 'docs'))) visit(join(PACKAGE_ROOT, 'docs'));
  if (existsSync(join(PACKAGE_ROOT, 'README.md'))) files.unshift(join(PACKAGE_ROOT, 'README.md'));
  return files.map((file) => ({
    path: relative(PACKAGE_ROOT, file).split(sep).join('/'),
    text: readFileSync(file, 'utf8'),
  }));
}
