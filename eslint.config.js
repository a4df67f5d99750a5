import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The import directions of src/ (ARCHITECTURE.md, "Layers"): each layer and the layers its code
 * imports. Everything else under src/ is refused, src/cli by everyone. An edge is listed only while
 * some import uses it (test/layer-edges.test.ts), and ARCHITECTURE.md's diagram is generated from
 * this table (`npm run generate`). Tests beside the code (`*.test.ts`) are consumers, like test/:
 * they may wire layers together, only src/cli stays out. src/generated is the output of
 * `npm run generate` and is not linted.
 */
export const LAYERS = {
  core: [], // the pure model: no node: module, no other layer; src/generated/validators.js is data
  secrets: [], // fingerprints and the scrubber over its literal index
  platform: ['core'], // the process's edges: SQLite seam, raw-body HTTP, package paths, the key ring
  spec: ['core', 'platform'], // the spec model and the callback type table: every reader of spec/ goes through it
  crypto: ['core'],
  net: ['core'],
  wire: ['core', 'crypto'], // the wire protocol: what acknowledges a callback, how a crypto failure is classified
  service: ['core', 'crypto', 'spec', 'wire'], // the wallet service without a transport: no node:http, no msw, no SQLite
  emulator: ['core', 'crypto', 'net', 'platform', 'secrets', 'service', 'spec', 'wire'],
  merchant: ['core', 'crypto', 'net', 'platform', 'spec'],
  runner: ['core', 'crypto', 'net', 'platform', 'secrets', 'spec', 'wire'],
  reporters: ['core', 'wire'], // and `import type` from src/runner: the report model, never the engine
  generate: ['core', 'crypto', 'msw', 'platform', 'spec', 'wire'], // platform: the package root, where the bench figures are read
  msw: ['core', 'crypto', 'generated', 'service'],
  load: ['core', 'crypto', 'merchant', 'spec', 'wire'],
  property: ['core', 'crypto', 'runner', 'spec', 'wire'],
  observe: ['core', 'crypto', 'net', 'platform', 'runner', 'secrets', 'spec', 'wire'], // the decrypting proxy: judges with the runner's checks and verdict model
};
const ALL = ['cli', 'generated', ...Object.keys(LAYERS)];

/** The files of src/generated a layer may read without importing src/generated as a whole. */
export const GENERATED_FILE = {
  core: ['validators.js'], // the spec's compiled schemas, data rather than a layer
  // the typed control-API client (builds control requests, sends through the runner's Transport);
  // the built-in suites and the checks' parameter validators as `npm run generate` made them
  runner: ['control-client.js', 'suites.js'],
  generate: ['control-client.js'], // the Pact verifier arranges provider states through it
};

/** Layers a layer may import types from, and nothing else: the reporters read the report model. */
export const TYPES_FROM = { reporters: 'runner' };

/** Packages a layer must not import: src/core is pure, src/service the service without a transport or a database. */
const NO_PACKAGES = {
  core: {
    regex:
      '^(node:.*|http|https|http2|net|tls|dgram|fs|fs/promises|child_process|crypto|os|path|url|module|worker_threads)$',
    what: 'node: module',
  },
  service: {
    regex: '^((node:)?(http|https|http2|net|tls|dgram|fs)|msw|msw/.*|better-sqlite3|(node:)?sqlite|pg)$',
    what: 'node:http, msw, a database or the file system',
  },
};

/** A relative import that climbs out of the current layer into `layer`. */
const into = (layer, rest = '') => `^(\\.\\./)+${layer}(/${rest}|$)`;

function layerRule(layer) {
  const allowed = LAYERS[layer];
  const generatedFiles = GENERATED_FILE[layer];
  const message = `src/${layer} may import only ${allowed.length ? allowed.map((name) => `src/${name}`).join(', ') : 'itself'}${generatedFiles ? ` and ${generatedFiles.map((file) => `src/generated/${file}`).join(', ')}` : ''}${TYPES_FROM[layer] ? ` and types from src/${TYPES_FROM[layer]}` : ''} (ARCHITECTURE.md: import directions)`;
  const patterns = ALL.filter((name) => name !== layer && !allowed.includes(name)).map((name) => {
    if (name === 'cli')
      return { regex: into('cli'), message: 'Nothing imports src/cli (ARCHITECTURE.md: import directions).' };
    if (generatedFiles && name === 'generated')
      return {
        regex: into('generated', `(?!(${generatedFiles.map((file) => file.replace(/\./g, '\\.')).join('|')})$)`),
        message,
      };
    if (TYPES_FROM[layer] === name) return { regex: into(name), allowTypeImports: true, message };
    return { regex: into(name), message };
  });
  // A layer built on the runner sees its public API alone: the runner's insides stay its own.
  if (allowed.includes('runner'))
    patterns.push({
      regex: into('runner', '(?!api\\.js$)'),
      message: `src/${layer} imports src/runner only through its public API, src/runner/api.ts (ARCHITECTURE.md: import directions)`,
    });
  const banned = NO_PACKAGES[layer];
  if (banned)
    patterns.push({
      regex: banned.regex,
      message: `src/${layer} imports no ${banned.what} (ARCHITECTURE.md: import directions)`,
    });
  return { 'no-restricted-imports': 'off', '@typescript-eslint/no-restricted-imports': ['error', { patterns }] };
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'src/generated/**', 'reports/**', 'test/vectors/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': [
        'error',
        {
          patterns: [{ group: ['**/cli/*'], message: 'Nothing imports cli (design.md: dependencies point one way).' }],
        },
      ],
    },
  },
  {
    files: ['src/cli/**', 'bin/**', 'test/**', 'bench/**'],
    rules: { 'no-restricted-imports': 'off' },
  },
  // A command module registers one command; what commands share (flags, their checks) lives in
  // modules of its own (cli/flags.ts, cli/target-flags.ts, cli/options.ts), never in another command.
  {
    files: ['src/cli/*-command.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\./[^/]*-command\\.js$',
              message: 'A command module imports no other command module: shared flags live in src/cli/flags.ts.',
            },
          ],
        },
      ],
    },
  },
  ...Object.keys(LAYERS).map((layer) => ({
    files: [`src/${layer}/**/*.ts`],
    ignores: ['**/*.test.ts'],
    rules: layerRule(layer),
  })),
);
