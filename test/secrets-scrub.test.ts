import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fingerprint, type SecretKind } from '../src/secrets/scrub.js';
import { runCliAsync } from './support/cli.js';

/**
 * Issue 12: every configured secret is planted everywhere a target can echo it (answer headers and
 * bodies, error texts, URLs with userinfo and query tokens, transport errors), then all four reports
 * and the console are searched for it, raw, percent-encoded and JSON-escaped, and for its first
 * characters (a message cut short). None may show; its fingerprint must.
 */

const REPORTS = ['report.json', 'junit.xml', 'report.html', 'summary.md'];

/** A target that answers everything by echoing the request (headers, body, URL) and leaking `leak`; every 11th request after the 3rd is cut off. */
async function startEchoTarget(
  leak = '',
): Promise<{ origin: string; requests: () => number; close: () => Promise<void> }> {
  let count = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      count++;
      if (count > 3 && count % 11 === 0) {
        req.socket.destroy();
        return;
      }
      const said = `refused key ${req.headers['x-api-key'] ?? ''} token ${req.headers['x-control-token'] ?? ''} auth ${req.headers.authorization ?? ''} at ${req.url ?? ''}`;
      // The first answers acknowledge, so the pre-flight lets the run go on.
      const ok = count <= 3 || count % 3 !== 0;
      const body = JSON.stringify({
        code: ok ? 0 : 1,
        errCode: ok ? 0 : 1,
        message: said,
        errMsg: said,
        data: '',
        echo: { method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') },
        leak,
      });
      res.writeHead(ok ? 200 : 500, {
        'content-type': 'application/json',
        'x-echo-key': String(req.headers['x-api-key'] ?? ''),
        'x-echo-token': String(req.headers['x-control-token'] ?? ''),
        'x-echo-url': req.url ?? '',
        'x-echo-leak': leak.replace(/\s+/g, ' '),
      });
      res.end(body);
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  return {
    origin: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => count,
    close: () => new Promise<void>((closed) => server.close(() => closed())),
  };
}

/** Every spelling of a secret that must not show: raw, percent-encoded, JSON-escaped, and its first 8 characters in each. */
function forbiddenSpellings(secret: string): string[] {
  const whole = [secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)];
  return [...new Set([...whole, ...whole.map((spelling) => spelling.slice(0, 8))])];
}

function outputsOf(dir: string, run: { stdout: string; stderr: string }): Record<string, string> {
  return {
    ...Object.fromEntries(REPORTS.map((name) => [name, readFileSync(join(dir, name), 'utf8')])),
    stdout: run.stdout,
    stderr: run.stderr,
  };
}

function expectScrubbed(
  outputs: Record<string, string>,
  secrets: Record<string, { value: string; kind: SecretKind }>,
): void {
  for (const [what, { value, kind }] of Object.entries(secrets)) {
    for (const spelling of forbiddenSpellings(value)) {
      for (const [name, text] of Object.entries(outputs))
        expect(text.includes(spelling), `${what} as ${JSON.stringify(spelling)} in ${name}`).toBe(false);
    }
    expect(outputs['report.json'], `${what}'s fingerprint in report.json`).toContain(fingerprint(value, kind));
  }
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe('no secret reaches a report or the console, wherever a target echoes it', () => {
  it('verify service: API key (env), control token (file), forbidden key (config file), expired and not-yet-valid key (flag)', async () => {
    const secrets = {
      apiKey: { value: 'ak"Live+7/Qx=9z-0001', kind: 'ak' as const },
      controlToken: { value: 'ct+S3cret/Tok=2&x', kind: 'ct' as const },
      forbiddenKey: { value: 'fk-Forbid"0003/zz', kind: 'fk' as const },
      expiredKey: { value: 'ek-Expired+0004=q', kind: 'ek' as const },
      futureKey: { value: 'nk-Future"0008/w+', kind: 'nk' as const },
    };
    const target = await startEchoTarget();
    closers.push(target.close);
    const cwd = mkdtempSync(join(tmpdir(), 'wc-secrets-service-'));
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(join(cwd, 'public.pem'), publicKey.export({ type: 'spki', format: 'pem' }));
    writeFileSync(join(cwd, 'control-token'), `${secrets.controlToken.value}\n`);
    writeFileSync(join(cwd, 'forbidden-key'), `${secrets.forbiddenKey.value}\n`);
    writeFileSync(
      join(cwd, 'wallet-conformance.yaml'),
      'reports: out\nservice:\n  publicKey: public.pem\n  userId: 7\n  allowOrders: true\n  forbiddenKeyFile: forbidden-key\n',
    );
    const enc = encodeURIComponent;
    const run = await runCliAsync(
      [
        'verify',
        'service',
        '--base-url',
        `http://merchant:${enc(secrets.controlToken.value)}@${target.origin}/api?api_key=${enc(secrets.apiKey.value)}`,
        '--card-base-url',
        `http://${target.origin}/card?token=${enc(secrets.forbiddenKey.value)}&sig=${enc(secrets.expiredKey.value)}&nb=${enc(secrets.futureKey.value)}`,
        '--control-token-file',
        'control-token',
        '--expired-key',
        secrets.expiredKey.value,
        '--future-key',
        secrets.futureKey.value,
      ],
      {
        cwd,
        env: {
          WALLET_API_KEY: secrets.apiKey.value,
          WALLET_CONTROL_TOKEN: undefined,
          WALLET_FORBIDDEN_KEY: undefined,
          WALLET_EXPIRED_KEY: undefined,
          WALLET_FUTURE_KEY: undefined,
        },
      },
    );
    expect(
      run.stderr.split('\n').filter((line) => line.includes('wallet-conformance:') && !line.includes('pre-flight')),
    ).toEqual([]);
    expect(run.status).toBe(1);
    expect(target.requests()).toBeGreaterThan(50);
    expectScrubbed(outputsOf(join(cwd, 'out'), run), secrets);
  }, 120_000);

  it('verify merchant: API key (file flag), expired key (env), not-yet-valid key (flag), private key (config file) that the target leaks as PEM and bare DER', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const pkcs1Der = privateKey.export({ type: 'pkcs1', format: 'der' }).toString('base64');
    const secrets = {
      apiKey: { value: 'mk"Merchant+Key/0005', kind: 'ak' as const },
      expiredKey: { value: 'ek2-Old"Key+0006', kind: 'ek' as const },
      futureKey: { value: 'nk2-Next"Key+0009', kind: 'nk' as const },
      privateKey: { value: pem, kind: 'pk' as const },
    };
    const target = await startEchoTarget(`${pem} and ${pkcs1Der}`);
    closers.push(target.close);
    const cwd = mkdtempSync(join(tmpdir(), 'wc-secrets-merchant-'));
    writeFileSync(join(cwd, 'private.pem'), pem);
    writeFileSync(join(cwd, 'api-key'), `${secrets.apiKey.value}\n`);
    writeFileSync(join(cwd, 'wc.yaml'), 'merchant:\n  privateKey: private.pem\n  reports: merchant-out\n');
    const enc = encodeURIComponent;
    const run = await runCliAsync(
      [
        'verify',
        'merchant',
        '--config',
        'wc.yaml',
        '--callback-url',
        `http://hook:${enc(secrets.apiKey.value)}@${target.origin}/cb?token=${enc(secrets.expiredKey.value)}&nb=${enc(secrets.futureKey.value)}`,
        '--api-key-file',
        'api-key',
        '--future-key',
        secrets.futureKey.value,
        '--suite',
        'merchant/*',
      ],
      {
        cwd,
        env: { WALLET_API_KEY: undefined, WALLET_EXPIRED_KEY: secrets.expiredKey.value, WALLET_FUTURE_KEY: undefined },
      },
    );
    expect(run.status).toBe(1);
    const outputs = outputsOf(join(cwd, 'merchant-out'), run);
    expectScrubbed(outputs, secrets);
    for (const [name, text] of Object.entries(outputs)) {
      expect(text, name).not.toMatch(/PRIVATE KEY/);
      expect(text.includes(pkcs1Der.slice(100, 164)), `the bare DER in ${name}`).toBe(false);
      for (const line of pem.split('\n').slice(1, -2)) expect(text.includes(line), `a PEM line in ${name}`).toBe(false);
    }
  }, 120_000);

  it('callback send (callback URL and key file from the config file) prints the answers a target echoes without the API key', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const apiKey = 'cb"Send+Key/0007';
    const target = await startEchoTarget();
    closers.push(target.close);
    const cwd = mkdtempSync(join(tmpdir(), 'wc-secrets-send-'));
    writeFileSync(join(cwd, 'private.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
    // merchant.callbackUrl is callback send's --url.
    writeFileSync(
      join(cwd, 'wallet-conformance.yaml'),
      `merchant:\n  callbackUrl: "http://${target.origin}/cb?key=${encodeURIComponent(apiKey)}"\n  privateKey: private.pem\n`,
    );
    const run = await runCliAsync(['callback', 'send', '--type', '1', '--deliveries', '2'], {
      cwd,
      env: { WALLET_API_KEY: apiKey },
    });
    expect(run.stdout).toMatch(/delivery 2\/2: HTTP 200/);
    for (const spelling of forbiddenSpellings(apiKey)) expect(run.stdout + run.stderr).not.toContain(spelling);
    expect(run.stdout).toContain(fingerprint(apiKey, 'ak'));
  }, 60_000);
});

describe('scrubbing by value: a target echoes every secret in every rendering', () => {
  /** Text that reads as a word: the scrubber leaves such windows of a secret's text (docs/decisions/0076-secrets.md). */
  const WORDLIKE = /^[A-Za-z]?[a-z]*(?:[-_. /:][a-z]*)*$/;
  const windows = (text: string, wordy: boolean) =>
    Array.from({ length: Math.max(0, text.length - 7) }, (_, i) => text.slice(i, i + 8)).filter(
      (window) => !(wordy && WORDLIKE.test(window)),
    );
  const base64At = (bytes: Buffer, shift: number) =>
    Buffer.concat([Buffer.alloc(shift, 0x41), bytes])
      .toString('base64')
      .slice(Math.ceil((shift * 4) / 3), Math.floor(((shift + bytes.length) * 4) / 3));

  /** Every rendering of a text secret a target might echo: its text family (word-like windows exempt) and its bytes encoded. */
  function textRenderings(value: string): Array<{ text: string; wordy: boolean }> {
    const bytes = Buffer.from(value);
    const text = [
      value,
      value.toUpperCase(),
      value.toLowerCase(),
      encodeURIComponent(value),
      JSON.stringify(value).slice(1, -1),
      value.slice(2, 11),
    ];
    const encoded = [
      bytes.toString('hex'),
      bytes.toString('hex').toUpperCase(),
      bytes.toString('base64url'),
      base64At(bytes, 0),
      base64At(bytes, 1),
      base64At(bytes, 2),
      bytes.toString('hex').slice(5, 21),
    ];
    return [...text.map((t) => ({ text: t, wordy: true })), ...encoded.map((t) => ({ text: t, wordy: false }))];
  }

  /** The private exponent and primes of a key, rendered as a target might leak them. */
  function keyRenderings(jwk: {
    d?: string;
    p?: string;
    q?: string;
    dp?: string;
  }): Array<{ text: string; wordy: boolean }> {
    const d = Buffer.from(jwk.d!, 'base64url');
    const p = Buffer.from(jwk.p!, 'base64url');
    return [
      d.toString('hex').toUpperCase(),
      d.toString('hex').slice(31, 77),
      p.toString('base64'),
      base64At(Buffer.from(jwk.q!, 'base64url'), 1),
      jwk.dp!,
    ].map((text) => ({ text, wordy: false }));
  }

  it('verify merchant: the API key, expired key, not-yet-valid key, probe token and private key leaked raw, as hex, Base64, upper-case, escaped and in pieces show nowhere', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const secrets = {
      apiKey: { value: 'mk7Q"x9+Zp/2Wv&r4Lk0', kind: 'ak' as const },
      expiredKey: { value: 'ek3q"Ol9d+Ke5y/06z', kind: 'ek' as const },
      futureKey: { value: 'nk4w"Fu7t+Re2b/18k', kind: 'nk' as const },
      probeToken: { value: 'pt9Pr4ob+Tk/77xQ2', kind: 'pt' as const },
    };
    const all = [
      ...Object.values(secrets).flatMap((secret) => textRenderings(secret.value)),
      ...keyRenderings(privateKey.export({ format: 'jwk' })),
    ];
    const leak = all.map((rendering) => rendering.text).join(' | ');
    let count = 0;
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        count++;
        const headers = {
          'content-type': 'application/json',
          'x-echo-leak': leak,
          'x-echo-key': String(req.headers['x-api-key'] ?? ''),
          'x-echo-auth': String(req.headers.authorization ?? ''),
        };
        if ((req.url ?? '').startsWith('/probe')) return res.writeHead(200, headers).end('{"processed":[]}');
        // The first answers acknowledge (the pre-flight goes on); later ones refuse, leaking everything.
        const ok = count <= 3;
        res
          .writeHead(ok ? 200 : 500, headers)
          .end(JSON.stringify({ errCode: ok ? 0 : 1, message: `refused ${leak}`, echo: req.headers }));
      });
    });
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    closers.push(() => new Promise<void>((closed) => server.close(() => closed())));
    const origin = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    const cwd = mkdtempSync(join(tmpdir(), 'wc-secrets-values-'));
    writeFileSync(join(cwd, 'private.pem'), pem);
    writeFileSync(join(cwd, 'api-key'), `${secrets.apiKey.value}\n`);
    const run = await runCliAsync(
      [
        'verify',
        'merchant',
        '--callback-url',
        `http://${origin}/cb`,
        '--probe-url',
        `http://${origin}/probe`,
        '--private-key',
        'private.pem',
        '--api-key-file',
        'api-key',
        '--future-key',
        secrets.futureKey.value,
        '--suite',
        'merchant/key-first',
        '--reports',
        'out',
      ],
      {
        cwd,
        env: {
          WALLET_API_KEY: undefined,
          WALLET_EXPIRED_KEY: secrets.expiredKey.value,
          WALLET_FUTURE_KEY: undefined,
          WALLET_PROBE_TOKEN: secrets.probeToken.value,
        },
      },
    );
    expect(count).toBeGreaterThan(5);
    const outputs = outputsOf(join(cwd, 'out'), run);
    for (const [name, text] of Object.entries(outputs)) {
      const folded = text.toLowerCase();
      for (const rendering of all) {
        for (const window of windows(rendering.text, rendering.wordy))
          expect(
            folded.includes(window.toLowerCase()),
            `${JSON.stringify(window)} of ${JSON.stringify(rendering.text.slice(0, 40))} in ${name}`,
          ).toBe(false);
      }
    }
    expect(outputs['report.json']).toContain(fingerprint(secrets.apiKey.value, 'ak'));
  }, 120_000);
});
