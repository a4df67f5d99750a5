// @ts-check
/**
 * `npm run mutation:reference` (scripts/mutation-reference.mjs): mutants of the reference merchant's
 * and the service core's rule-bearing code, each judged by the conformance run itself: the built
 * CLI's `run` (emulator and reference merchant, every suite, both sides), not by unit tests. A mutant
 * survives when `run` still exits 0. docs/mutation-reference.md has the figure and every survivor.
 *
 * One tsc build of the instrumented sources serves every mutant: the mutant in force is chosen when
 * the process starts, from the __STRYKER_ACTIVE_MUTANT__ variable the command runner sets.
 *
 * The scope (merchant, service or service-requests, from REFERENCE_MUTATION_SCOPE; all when unset) is kept to what
 * `run` exercises and the judge does not share; docs/mutation-reference.md says what is left out and why.
 *
 * @type {Record<'merchant' | 'service' | 'service-requests', string[]>}
 */
export const SCOPES = {
  merchant: [
    // The receiver: the key check first (CB-KEY-*), decrypt and validate (CB-DECRYPT), the key of
    // the event, the claim (CB-ONCE, CB-DUP-ACK), processing and the done mark (CB-NO-FALSE-ACK),
    // the HTTP front (method, key before body).
    'src/merchant/callback-handler.ts:222-259',
    'src/merchant/callback-handler.ts:263-271',
    'src/merchant/callback-handler.ts:174-180',
    'src/merchant/callback-handler.ts:343-357',
    'src/merchant/callback-handler.ts:390-427',
    'src/merchant/callback-handler.ts:460-464',
    'src/merchant/api-keys.ts:22-29',
    // The key ring's check as the merchant uses it (CB-KEY-SAME, CB-KEY-401): one header, the digest, the window.
    'src/platform/api-keys.ts:63-79',
    // The idempotency key (CB-ID-*).
    'src/merchant/idempotency.ts:35-37',
    'src/merchant/idempotency.ts:49-71',
    'src/merchant/idempotency.ts:80-82',
    // The SQLite store `run` uses: claim, done mark (CB-ONCE, CB-NO-FALSE-ACK).
    'src/merchant/sqlite-store.ts:135-147',
    'src/merchant/sqlite-store.ts:166-171',
    'src/merchant/sqlite-store.ts:226-231',
  ],
  service: [
    // getEnergyMaxCount's reading and the lease debits it settles first (ENERGY-FLOOR, ENERGY-RES).
    'src/service/energy.ts:27-58',
    // withdrawWithoutVerify: the lease's cost against the pending debits, the duplicate callBackId,
    // the order's record and the echoed tenantUserId (ORDER-CALLBACK-ID, ORDER-RES, ENERGY-FLOOR).
    'src/service/order.ts:72-121',
    'src/service/order.ts:220-250',
    // The request pipeline's key check and its place before everything else (ERR-401, ERR-403).
    'src/service/pipeline.ts:315-324',
  ],
  // The service's refusals of a request, every check after the key's: the Content-Type (ENERGY-CT,
  // ORDER-CT, CARD-PATH), the form field (ENERGY-DATA, ORDER-DATA), its pattern and decryption, the
  // plain JSON, each operation's fields (ENERGY-REQ, ORDER-FIELDS, ORDER-TENANT-TYPE, ORDER-KIND,
  // ORDER-ENERGY-AMOUNT, ORDER-EXPIRY, CARD-REQ, CARD-*), and the answers they give (ENV-*, ERR-*,
  // CARD-RES). A scope of its own, so the two above keep their figures.
  'service-requests': [
    'src/service/pipeline.ts:203-205',
    'src/service/pipeline.ts:263-294',
    'src/service/pipeline.ts:325-342',
    'src/service/pipeline.ts:346-460',
    'src/service/pipeline.ts:462-499',
    'src/service/energy.ts:14-26',
    'src/service/order.ts:124-211',
    'src/service/card-close.ts:17-90',
  ],
};

const scope = process.env.REFERENCE_MUTATION_SCOPE;
if (scope !== undefined && !(scope in SCOPES))
  throw new Error(`REFERENCE_MUTATION_SCOPE must be one of ${Object.keys(SCOPES).join(', ')}, not ${scope}`);
const folder = `reports/mutation-reference/${scope ?? 'all'}`;

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'command',
  // A fresh reports folder per run: two mutants run at once in the same sandbox.
  commandRunner: {
    command: 'd=$(mktemp -d) && node bin/wallet-conformance.js run --reports "$d"; rc=$?; rm -rf "$d"; exit $rc',
  },
  // Once, in the sandbox, after instrumenting: dist/ holds every mutant, switched at run time.
  buildCommand: 'tsc -p tsconfig.build.json',
  mutate: scope ? SCOPES[/** @type {keyof typeof SCOPES} */ (scope)] : Object.values(SCOPES).flat(),
  // Text is left alone: refusal messages and log lines (free under U-CODES; the suites rightly judge
  // no wording), SQL (a broken statement fails at start-up) and header names would be a quarter of the
  // mutants at a whole run each. The values the interface fixes are the derived cases' business.
  mutator: { excludedMutations: ['StringLiteral'] },
  // The command runner reports no per-test coverage: every mutant gets the whole run.
  coverageAnalysis: 'off',
  concurrency: 2,
  // A run takes ~10 s on the shared 2-core machine; a mutant that hangs it is a timeout (counted as
  // detected) after about 1.5 x the dry run + 40 s, and its process tree is killed.
  timeoutMS: 40000,
  timeoutFactor: 1.5,
  incremental: true,
  incrementalFile: `${folder}/incremental.json`,
  // `run` needs src (built in the sandbox), bin, spec, suites and schemas; not the tests or builds.
  ignorePatterns: ['dist', 'bench', 'examples', 'reports', 'test', 'docs', '.ci', '**/*.test.ts'],
  tempDirName: 'reports/.stryker-tmp-reference',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: `${folder}/mutation.html` },
  jsonReporter: { fileName: `${folder}/mutation.json` },
  thresholds: { high: 90, low: 80, break: null },
};
