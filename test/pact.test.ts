import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../src/cli/embedded.js';
import { PACKAGE_ROOT, SPEC_PATH } from '../src/platform/package-paths.js';
import { validateSchema } from '../src/core/schemas.js';
import { faultyVariant, type EmulatorFault } from './fixtures/emulator-faults.js';
import { PACT_DIR } from '../src/generate/pact/contract.js';
import { verifyPacts, type PactVerification } from '../src/generate/pact/verifier.js';
import { parseSpec } from '../src/spec/document.js';
import { runCliAsync } from './support/cli.js';
import { runCliInProcess } from './support/cli-in-process.js';

const spec = parseSpec(readFileSync(SPEC_PATH, 'utf8'), 'spec/wallet-api.yaml');
const HTTP_PACT = join(PACKAGE_ROOT, PACT_DIR, 'wallet-merchant-wallet-service.json');
const MESSAGE_PACT = join(PACKAGE_ROOT, PACT_DIR, 'wallet-merchant-wallet-service-callbacks.json');

interface Matcher {
  match: string;
  regex?: string;
}
interface Interaction {
  type: string;
  description: string;
  providerStates?: Array<{ name: string }>;
  request?: {
    method: string;
    path: string;
    headers?: Record<string, string[]>;
    body?: { content: unknown; contentType: string };
    matchingRules?: { body?: Record<string, { matchers: Matcher[] }> };
  };
  response?: {
    status: number;
    body?: { content: Record<string, unknown> };
    matchingRules?: { body?: Record<string, { matchers: Matcher[] }> };
  };
  contents?: { content: Record<string, unknown> };
}
interface PactFile {
  consumer: { name: string };
  provider: { name: string };
  interactions: Interaction[];
  metadata: { pactSpecification: { version: string } };
}
const load = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as PactFile;

const cli = runCliAsync;

/** Verifies the packaged HTTP pact against an embedded emulator, with or without faults. */
async function verifyEmulator(faults: EmulatorFault[] = []): Promise<PactVerification> {
  const embedded = await startEmbedded({ emulatorVariant: faultyVariant(faults) });
  try {
    const s = embedded.service;
    return await verifyPacts({
      spec,
      baseUrl: s.baseUrl,
      cardBaseUrl: s.cardBaseUrl,
      apiKey: s.apiKey,
      key: s.publicKey,
      ...(s.userId === undefined ? {} : { userId: s.userId }),
      ...(s.controlToken ? { controlToken: s.controlToken } : {}),
      ...(s.forbiddenKey ? { forbiddenKey: s.forbiddenKey } : {}),
      pactFiles: [HTTP_PACT],
      logLevel: 'error',
    });
  } finally {
    await embedded.close();
  }
}

describe('the generated Pact V4 files (spec/pacts)', () => {
  const http = load(HTTP_PACT);
  const messages = load(MESSAGE_PACT);

  it('are V4 pacts of the merchant as consumer of the service and of its callbacks', () => {
    expect([http.metadata.pactSpecification.version, http.consumer.name, http.provider.name]).toEqual([
      '4.0',
      'wallet-merchant',
      'wallet-service',
    ]);
    expect([messages.metadata.pactSpecification.version, messages.provider.name]).toEqual([
      '4.0',
      'wallet-service-callbacks',
    ]);
  });

  it('hold an HTTP interaction for every service path of the spec, and the 401, 403 and 404 answers', () => {
    const servicePaths = Object.entries(spec.document.paths as Record<string, Record<string, { tags?: string[] }>>)
      .filter(([, item]) => !Object.values(item).some((op) => op.tags?.includes('control')))
      .map(([path]) => path);
    expect(servicePaths.length).toBe(3);
    const paths = new Set(http.interactions.map((i) => i.request!.path));
    for (const path of servicePaths) expect(paths, path).toContain(path);
    expect(http.interactions.every((i) => i.type === 'Synchronous/HTTP')).toBe(true);
    expect(http.interactions.map((i) => i.response!.status).sort()).toEqual(
      expect.arrayContaining([200, 401, 403, 404]),
    );
    const unauthorized = http.interactions.find((i) => i.response!.status === 401)!;
    expect(unauthorized.response!.body!.content).toEqual({ code: 'UNAUTHORIZED', message: 'unauthorized' });
  });

  it('match the form field data by the Base64 regex of the spec, on a form body whose example has +, / and =', () => {
    const forms = http.interactions.filter((i) => i.request!.body?.contentType === 'application/x-www-form-urlencoded');
    expect(forms.length).toBeGreaterThanOrEqual(4);
    for (const form of forms) {
      const [matcher] = form.request!.matchingRules!.body!['$.data']!.matchers;
      expect(matcher).toEqual({ match: 'regex', regex: '^[A-Za-z0-9+/]+={0,2}$' });
      const data = new URLSearchParams(String(form.request!.body!.content)).get('data')!;
      expect(data).toMatch(new RegExp(matcher!.regex!));
    }
    // The form encoding of '+', '/' and '=' is what merchants get wrong: the examples show it.
    const sample = forms.map((form) => String(form.request!.body!.content)).join('');
    expect(sample).toMatch(/%2B/);
    expect(sample).toMatch(/%2F/);
    expect(sample).toMatch(/%3D/);
  });

  it('hold one message interaction per callback type, each content a valid payload of its type', () => {
    const types = messages.interactions.map((i) => i.contents!.content.type);
    expect(types).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(messages.interactions.every((i) => i.type === 'Asynchronous/Messages')).toBe(true);
    for (const message of messages.interactions)
      expect(validateSchema('CallbackPayload', message.contents!.content), message.description).toEqual([]);
  });
});

describe('pact generate (the real CLI)', () => {
  const out = mkdtempSync(join(tmpdir(), 'wc-pact-gen-'));

  it('--check fails on a folder without the pacts, generate writes them, then --check passes', async () => {
    const missing = await cli(['pact', 'generate', '--out', out, '--check']);
    expect(missing.stdout, `exit ${missing.status}: ${missing.stderr}`).toMatch(
      /stale .*wallet-merchant-wallet-service\.json/,
    );
    expect(missing.status).toBe(1);
    // Files in, files out: the other two runs use the built main in-process (test/support/cli-in-process.ts).
    const written = await runCliInProcess(['pact', 'generate', '--out', out]);
    expect(written.status, `${written.stdout}${written.stderr}`).toBe(0);
    expect(readFileSync(join(out, PACT_DIR, 'wallet-merchant-wallet-service.json'), 'utf8')).toBe(
      readFileSync(HTTP_PACT, 'utf8'),
    );
    const checked = await runCliInProcess(['pact', 'generate', '--out', out, '--check']);
    expect(checked.status, `${checked.stdout}${checked.stderr}`).toBe(0);
  }, 60_000);
});

describe('pact verify: the real Pact verifier against the emulator', () => {
  let embedded: Embedded;
  const dir = mkdtempSync(join(tmpdir(), 'wc-pact-verify-'));
  beforeAll(async () => {
    embedded = await startEmbedded();
    writeFileSync(
      join(dir, 'public.pem'),
      embedded.service.publicKey.keyObject.export({ type: 'spki', format: 'pem' }),
    );
  });
  afterAll(() => embedded.close());
  const flags = () => {
    const s = embedded.service;
    return [
      '--base-url',
      s.baseUrl,
      '--api-key',
      s.apiKey,
      '--public-key',
      join(dir, 'public.pem'),
      '--user-id',
      String(s.userId),
      '--control-token',
      s.controlToken!,
      '--forbidden-key',
      s.forbiddenKey!,
    ];
  };

  it('passes the emulator: exit 0, Pact passed and every decrypted result valid', async () => {
    const run = await cli(['pact', 'verify', ...flags(), '--log-level', 'error']);
    expect(run.stdout).toMatch(
      /pact verify: Pact verifier passed; decrypted data checks: 3 passed, 0 failed, 0 skipped/,
    );
    expect(run.stdout).not.toMatch(/FAIL/);
    expect(run.status).toBe(0);
  }, 60_000);

  it('without a control token or a forbidden key, notes the provider states it cannot arrange instead of pretending', async () => {
    const s = embedded.service;
    const run = await cli([
      'pact',
      'verify',
      '--base-url',
      s.baseUrl,
      '--api-key',
      s.apiKey,
      '--public-key',
      join(dir, 'public.pem'),
      '--log-level',
      'error',
    ]);
    expect(run.stdout).toMatch(
      /note {3}provider state "card pc-5500-0001-7342 .*is open" is not arranged: no --control-token/,
    );
    expect(run.stdout).toMatch(
      /note {3}provider state "the X-API-KEY of merchant 10086 lacks the getEnergyMaxCount permission" is not arranged: no --forbidden-key/,
    );
    expect(run.stdout).toMatch(/FAIL {3}pact: .*\(403\): .*expected 403 but was 401/);
    // The emulator holds no such card unless asked: Pact sees the failure envelope.
    expect(run.status).toBe(1);
  }, 60_000);

  it('gives one clear line and exit 2 for bad flags and unreachable targets', async () => {
    const s = embedded.service;
    // Refused by the argument checks, before any connection: the built main in-process. The unreachable
    // target is a real process (it connects).
    const both = await runCliInProcess([
      'pact',
      'verify',
      '--base-url',
      s.baseUrl,
      '--api-key',
      'k',
      '--public-key',
      join(dir, 'public.pem'),
      '--private-key',
      join(dir, 'public.pem'),
    ]);
    const noPacts = await runCliInProcess(['pact', 'verify', ...flags(), '--pact-dir', dir]);
    const unreachable = await cli([
      'pact',
      'verify',
      '--base-url',
      'http://127.0.0.1:9',
      '--api-key',
      'k',
      '--public-key',
      join(dir, 'public.pem'),
    ]);
    const publish = await runCliInProcess(['pact', 'verify', ...flags(), '--publish']);
    for (const [run, text] of [
      [both, /exactly one of --private-key F or --public-key F/],
      [noPacts, /holds no pact file of provider wallet-service/],
      [unreachable, /127\.0\.0\.1:9/],
      [publish, /--publish needs --broker-url/],
    ] as const) {
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toMatch(text);
      expect(run.stderr).not.toMatch(/\n\s+at /);
      expect(run.status).toBe(2);
    }
  }, 60_000);
});

describe('pact verify fails faulty emulators', () => {
  // Each fault breaks something the contract's interactions exercise: the Pact verifier's matchers
  // catch the HTTP shape, the decrypted-data checks catch what only the plaintext shows. Each test
  // names the interactions a fault must fail and the mismatch it must cause, and nothing else.
  const UNKNOWN_KEY = 'an energy capacity query with an unknown X-API-KEY (401)';
  const NO_PERMISSION = 'an energy capacity query with a key that lacks the permission (403)';
  const NO_PATH = 'a request to a path that does not exist (404)';
  const NO_CARD = 'closing a card that does not exist (card close failure)';
  const WITHDRAWAL = 'a withdrawal order (withdrawWithoutVerify)';
  const ENERGY = 'an energy capacity query (getEnergyMaxCount)';
  const LEASE = 'an energy lease order (withdrawWithoutVerify, symbol ENERGY)';
  const ENVELOPED = [WITHDRAWAL, ENERGY, LEASE].sort();
  const BASE64_REGEX = "to match '^[A-Za-z0-9+/]+={0,2}$'";
  const descriptions = load(HTTP_PACT).interactions.map((i) => i.description);

  /** Splits the verifier's lines ("Verifying a pact ... Given ... - <description>: <mismatch>") by interaction. */
  function mismatches(result: PactVerification): Array<{ interaction: string; mismatch: string }> {
    return result.failures
      .map((line) => {
        const interaction = descriptions.find((description) => line.includes(` - ${description}: `));
        return {
          interaction: interaction ?? `(no interaction of the pact) ${line}`,
          mismatch: interaction
            ? inOrder(line.slice(line.indexOf(` - ${interaction}: `) + interaction.length + 5))
            : '',
        };
      })
      .sort((a, b) => a.interaction.localeCompare(b.interaction));
  }
  // Pact lists the mismatches of one body in no fixed order: compare them as a sorted set.
  function inOrder(mismatch: string): string {
    return mismatch.split('; ').sort().join('; ');
  }
  const each = (interactions: string[], mismatch: string) =>
    [...interactions].sort().map((interaction) => ({ interaction, mismatch: inOrder(mismatch) }));

  const caughtByPact: Array<[EmulatorFault, Array<{ interaction: string; mismatch: string }>]> = [
    [
      'err401-wrong-body',
      each([UNKNOWN_KEY], "Expected 'UNAUTHENTICATED' (String) to be equal to 'UNAUTHORIZED' (String)"),
    ],
    [
      'err401-status-200',
      each([UNKNOWN_KEY], "Expected 401 (Integer) to be equal to 'UNAUTHORIZED' (String); expected 401 but was 200"),
    ],
    [
      'no-403',
      each(
        [NO_PERMISSION],
        "Expected 0 (Integer) to be equal to 'FORBIDDEN' (String); Expected '' (String) to be equal to 'forbidden' (String); expected 403 but was 200",
      ),
    ],
    [
      'err404-wrong-body',
      each(
        [NO_PATH],
        "Expected 'Not Found' (String) to be equal to 'not found' (String); Expected 'NOT_FOUND' (String) to be equal to 'NOT FOUND' (String)",
      ),
    ],
    ['envelope-code-string', each(ENVELOPED, "Expected '0' (String) to be equal to 0 (Integer)")],
    ['envelope-message-null', each(ENVELOPED, "Expected null (Null) to be equal to '' (String)")],
    ['card-missing-fields', each([NO_CARD], 'Actual map is missing the following keys: errorMessageEn')],
  ];

  it.each(caughtByPact)(
    '%s: the Pact verifier fails exactly the interactions it breaks, with the mismatch it causes',
    async (fault, expected) => {
      const result = await verifyEmulator([fault]);
      expect(mismatches(result)).toEqual(expected);
      expect(result.pactPassed).toBe(false);
      expect(result.checks.map((check) => check.status)).toEqual(['passed', 'passed', 'passed']);
      expect(result.passed).toBe(false);
    },
    60_000,
  );

  it('response-line-breaks: the Base64 matcher fails every encrypted answer, and so does its decryption', async () => {
    const result = await verifyEmulator(['response-line-breaks']);
    const found = mismatches(result);
    expect(found.map((entry) => entry.interaction)).toEqual(ENVELOPED);
    for (const { mismatch } of found)
      expect(mismatch).toMatch(
        new RegExp(`^Expected '[A-Za-z0-9+/=]{76}\\r\\n[A-Za-z0-9+/=\\r\\n]+' ${literal(BASE64_REGEX)}$`),
      );
    expect(result.checks).toEqual(
      [WITHDRAWAL, ENERGY, LEASE].map((interaction) => ({
        interaction,
        status: 'failed',
        message:
          'cannot decrypt data: line breaks in the Base64 text (at offset 76): MIME-style wrapping is not allowed; encode without line breaks',
      })),
    );
    expect(result.passed).toBe(false);
  }, 60_000);

  it('response-urlsafe-base64: the decryption of every encrypted answer fails, and the Base64 matcher on each answer that holds a - or _', async () => {
    const result = await verifyEmulator(['response-urlsafe-base64']);
    // A 1024-bit block's 171 characters miss both '+' and '/' once in about 230 answers; such an
    // answer only loses its padding, which the regex allows and the strict decoder refuses.
    const found = mismatches(result);
    expect(found.length).toBeGreaterThan(0);
    for (const { interaction, mismatch } of found) {
      expect(ENVELOPED).toContain(interaction);
      expect(mismatch).toMatch(new RegExp(`^Expected '[A-Za-z0-9_-]*[_-][A-Za-z0-9_-]*' ${literal(BASE64_REGEX)}$`));
    }
    expect(result.checks.map((check) => check.interaction)).toEqual([WITHDRAWAL, ENERGY, LEASE]);
    for (const check of result.checks) {
      expect(check.status).toBe('failed');
      expect(check.message).toMatch(
        /^cannot decrypt data: (the text uses the URL-safe Base64 alphabet \('-' and '_'\)|the '=' padding is missing)/,
      );
    }
  }, 60_000);

  const caughtDecrypted: Array<[EmulatorFault, Array<[string, RegExp]>]> = [
    // The stranger key is random: its ciphertext either opens to no known padding or, when it is
    // above the merchant's modulus, cannot be a ciphertext of that key at all. Both name the cause.
    [
      'response-wrong-key',
      [WITHDRAWAL, ENERGY, LEASE].map((interaction) => [
        interaction,
        /^cannot decrypt data: block 1 of 1: (no known padding after decryption: the data was encrypted under another key pair|the block's value exceeds this key's modulus: it was encrypted under another key)/,
      ]),
    ],
    [
      'order-result-string',
      [WITHDRAWAL, LEASE].map((interaction) => [
        interaction,
        /^decrypted data breaks OrderResult: \/tenantUserId must be integer \[ORDER-RES\]$/,
      ]),
    ],
    [
      'order-id-echo-wrong',
      [
        [WITHDRAWAL, /^id "(wd-[^"]+)-1" is not the request's callBackId "\1" \[ORDER-RES\]$/],
        [LEASE, /^id "(el-[^"]+)-1" is not the request's callBackId "\1" \[ORDER-RES\]$/],
      ],
    ],
    ['energy-round', [[ENERGY, /^energyMaxCount 313 is not floor\(20000000 \/ 64000\) = 312 \[ENERGY-FLOOR\]$/]]],
  ];

  it.each(caughtDecrypted)(
    '%s: Pact passes and the decrypted-data check fails exactly the interactions it breaks',
    async (fault, expected) => {
      const result = await verifyEmulator([fault]);
      expect(result.failures).toEqual([]);
      expect(result.pactPassed).toBe(true);
      const failed = result.checks.filter((check) => check.status === 'failed');
      expect(failed.map((check) => check.interaction)).toEqual(expected.map(([interaction]) => interaction));
      failed.forEach((check, i) => expect(check.message).toMatch(expected[i]![1]));
      expect(result.passed).toBe(false);
    },
    60_000,
  );

  it('and the fault-free emulator passes the same verification', async () => {
    const result = await verifyEmulator();
    expect(result.failures).toEqual([]);
    expect(result.checks.map((check) => check.status)).toEqual(['passed', 'passed', 'passed']);
    expect(result.passed).toBe(true);
  }, 60_000);
});

/** A literal text as a RegExp source. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

describe('pact verify with a Pact Broker', () => {
  it('fetches the pacts from the broker with the token and publishes the results with version and branch', async () => {
    const { createServer } = await import('node:http');
    const seen: Array<{ method: string; url: string; auth: string | undefined; body: string }> = [];
    const pact = readFileSync(HTTP_PACT, 'utf8');
    const broker = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, body });
        const base = `http://127.0.0.1:${(broker.address() as { port: number }).port}`;
        const hal = (value: unknown) => {
          res.writeHead(200, { 'content-type': 'application/hal+json' });
          res.end(JSON.stringify(value));
        };
        if (req.url === '/')
          return hal({
            _links: {
              'pb:provider-pacts-for-verification': {
                href: `${base}/pacts/provider/{provider}/for-verification`,
                templated: true,
              },
            },
          });
        if (req.url === '/pacts/provider/wallet-service/for-verification') {
          // The verifier reads the resource's own link (GET), then asks with its selectors (POST).
          if (req.method === 'GET') return hal({ _links: { self: { href: `${base}${req.url}` } } });
          return hal({
            _embedded: {
              pacts: [
                {
                  shortDescription: 'main',
                  verificationProperties: { pending: false, notices: [] },
                  _links: { self: { href: `${base}/pacts/1` } },
                },
              ],
            },
          });
        }
        if (req.url === '/pacts/1') {
          return hal({
            ...(JSON.parse(pact) as object),
            _links: {
              'pb:publish-verification-results': { href: `${base}/pacts/1/verification-results` },
              'pb:provider': { href: `${base}/pacticipants/wallet-service` },
            },
          });
        }
        if (req.url === '/pacticipants/wallet-service') {
          return hal({
            _links: {
              'pb:branch-version': {
                href: `${base}/pacticipants/wallet-service/branches/{branch}/versions/{version}`,
                templated: true,
              },
            },
          });
        }
        if (
          req.url === '/pacts/1/verification-results' ||
          req.url!.startsWith('/pacticipants/wallet-service/branches/')
        )
          return hal({ _links: {} });
        res.writeHead(404).end();
      });
    });
    await new Promise<void>((done) => broker.listen(0, '127.0.0.1', done));
    const embedded = await startEmbedded();
    try {
      const dir = mkdtempSync(join(tmpdir(), 'wc-pact-broker-'));
      writeFileSync(
        join(dir, 'public.pem'),
        embedded.service.publicKey.keyObject.export({ type: 'spki', format: 'pem' }),
      );
      const s = embedded.service;
      const brokerUrl = `http://127.0.0.1:${(broker.address() as { port: number }).port}`;
      const run = await cli([
        'pact',
        'verify',
        '--base-url',
        s.baseUrl,
        '--api-key',
        s.apiKey,
        '--public-key',
        join(dir, 'public.pem'),
        '--user-id',
        String(s.userId),
        '--control-token',
        s.controlToken!,
        '--forbidden-key',
        s.forbiddenKey!,
        '--log-level',
        'error',
        '--broker-url',
        brokerUrl,
        '--broker-token',
        'tok-123',
        '--publish',
        '--provider-version',
        'abc1234',
        '--provider-branch',
        'main',
      ]);
      expect(run.stdout).toMatch(/Pact verifier passed/);
      expect(run.status).toBe(0);
      const selectors = seen.find((r) => r.method === 'POST' && r.url.endsWith('/for-verification'));
      expect(JSON.parse(selectors!.body)).toMatchObject({
        consumerVersionSelectors: [{ mainBranch: true }, { deployedOrReleased: true }],
      });
      expect(seen.filter((r) => r.url === '/pacts/1')).toHaveLength(1);
      expect(seen.every((r) => r.auth === 'Bearer tok-123')).toBe(true);
      const published = seen.find((r) => r.url === '/pacts/1/verification-results');
      expect(published?.method).toBe('POST');
      expect(JSON.parse(published!.body)).toMatchObject({ success: true, providerApplicationVersion: 'abc1234' });
      expect(
        seen.some((r) => r.method === 'PUT' && r.url === '/pacticipants/wallet-service/branches/main/versions/abc1234'),
      ).toBe(true);
    } finally {
      await embedded.close();
      broker.close();
    }
  }, 60_000);
});
