import { createHash, generateKeyPairSync } from 'node:crypto';
import { LosslessNumber } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { createScrubber, fingerprint } from './scrub.js';
import { renderings, spellings, WINDOW } from './secret-renderings.js';

const API_KEY = 'sk_live+Ab/9"x&y=z<1>';
const TOKEN = 'ctl-7f3a9c2e-token';

function hash4(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 4);
}

describe('fingerprint', () => {
  it('is the kind, an ellipsis and 4 hex digits of the sha256, with no character of the secret', () => {
    expect(fingerprint(TOKEN, 'ct')).toBe(`ct…#${hash4(TOKEN)}`);
    expect(fingerprint('abcdef', 'ak')).not.toContain('abc');
  });

  it('stays the sha256 of each secret and kind however many were fingerprinted before (its memo is bounded)', () => {
    const values = Array.from({ length: 600 }, (_, i) => `secret-${i}`);
    for (const round of [1, 2]) {
      for (const value of values)
        expect(fingerprint(value, round === 1 ? 'ak' : 'ct'), value).toBe(
          `${round === 1 ? 'ak' : 'ct'}…#${hash4(value)}`,
        );
    }
    expect(fingerprint(TOKEN, 'ct')).toBe(`ct…#${hash4(TOKEN)}`);
    expect(fingerprint(TOKEN, 'ak')).toBe(`ak…#${hash4(TOKEN)}`);
  });

  it('gives a PEM key and its bare Base64 DER the same fingerprint', () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const der = privateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64');
    expect(fingerprint(pem, 'pk')).toBe(fingerprint(der, 'pk'));
  });
});

describe('createScrubber', () => {
  const scrub = createScrubber([
    { kind: 'ak', value: API_KEY },
    { kind: 'ct', value: TOKEN },
  ]);
  const shownKey = fingerprint(API_KEY, 'ak');

  it('replaces a secret in every spelling: raw, percent-encoded, form-encoded, JSON-escaped twice, HTML-escaped', () => {
    const forms = [
      API_KEY,
      encodeURIComponent(API_KEY),
      new URLSearchParams({ k: API_KEY }).toString().slice(2),
      JSON.stringify(API_KEY).slice(1, -1),
      JSON.stringify(JSON.stringify(API_KEY).slice(1, -1)).slice(1, -1),
      API_KEY.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;'),
    ];
    for (const form of forms) {
      const out = scrub.text(`before ${form} after`);
      expect(out).toBe(`before ${shownKey} after`);
    }
  });

  it('lists the lower-case percent encoding among the spellings', () => {
    expect(spellings('a/b')).toContain('a%2fb');
  });

  it('scrubs data deeply and keeps exact numbers as they are', () => {
    const amount = new LosslessNumber('12345678901234567890.123');
    const out = scrub.value({ headers: { 'x-control-token': TOKEN }, list: [`t=${TOKEN}`], amount });
    expect(out).toEqual({
      headers: { 'x-control-token': fingerprint(TOKEN, 'ct') },
      list: [`t=${fingerprint(TOKEN, 'ct')}`],
      amount,
    });
    expect(out.amount).toBe(amount);
  });

  it('removes any private key, configured or not, as PEM (also JSON-escaped) and as bare Base64 DER', () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const der = privateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64');
    const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const out = createScrubber([]).text(`a ${pem} b ${JSON.stringify(pem)} c ${der} d ${publicPem}`);
    expect(out).not.toMatch(/PRIVATE KEY/);
    expect(out).not.toContain(der.slice(10, 60));
    for (const line of pem.split('\n').slice(1, -2)) expect(out).not.toContain(line);
    expect(out).toContain(publicPem);
    expect(out).toMatch(/pk…#[0-9a-f]{4}/);
  });

  it('removes every line of a configured key even when the PEM armour is gone', () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const lines = pem.split('\n').slice(1, -2);
    const out = createScrubber([{ kind: 'pk', value: pem }]).text(
      `one line: ${lines[3]!}; percent: ${encodeURIComponent(lines[5]!)}`,
    );
    expect(out).toBe(`one line: ${fingerprint(pem, 'pk')}; percent: ${fingerprint(pem, 'pk')}`);
  });

  it('removes URL passwords, token query parameters and Authorization credentials it was not told about', () => {
    const out = createScrubber([]).text(
      'GET http://alice:hunter22@127.0.0.1:80/x?access_token=abc123&page=2 authorization: Bearer eyJhbGciOi.x.y',
    );
    expect(out).toBe(
      `GET http://alice:${fingerprint('hunter22', 'pw')}@127.0.0.1:80/x?access_token=${fingerprint('abc123', 'qt')}&page=2 authorization: Bearer ${fingerprint('eyJhbGciOi.x.y', 'au')}`,
    );
  });

  it('keeps the fingerprint of a configured secret in a URL instead of fingerprinting it again', () => {
    const out = scrub.text(`http://u:${TOKEN}@h/?token=${TOKEN}`);
    expect(out).toBe(`http://u:${fingerprint(TOKEN, 'ct')}@h/?token=${fingerprint(TOKEN, 'ct')}`);
  });

  it('finds a configured secret inside Base64 (a Basic credential made from URL userinfo)', () => {
    const basic = Buffer.from(`merchant:${TOKEN}`).toString('base64');
    expect(createScrubber([{ kind: 'ct', value: TOKEN }]).text(`echo ${basic} end`)).toBe(
      `echo ${fingerprint(TOKEN, 'ct')} end`,
    );
  });

  it('names the kind right when the runner fingerprinted a configured forbidden key as an API key', () => {
    const forbidden = 'forbidden-key-0001';
    const out = createScrubber([{ kind: 'fk', value: forbidden }]).text(`x-api-key: ${fingerprint(forbidden, 'ak')}`);
    expect(out).toBe(`x-api-key: ${fingerprint(forbidden, 'fk')}`);
  });

  it('leaves text without secrets unchanged', () => {
    const text = 'service/orders/create: errCode 0, "amount": 12.50, Basic authentication is not used';
    expect(scrub.text(text)).toBe(text);
  });
});

describe('createScrubber on text cut short', () => {
  it('replaces the first characters of a secret that a truncated message ends with', () => {
    const secret = 'ak-Live-7Qx9zR2mP4';
    const scrub = createScrubber([{ kind: 'ak', value: secret }]);
    expect(scrub.text(`refused key ${secret.slice(0, 9)}…`)).toBe(`refused key ${fingerprint(secret, 'ak')}…`);
    expect(scrub.text(`{"errMsg":"refused key ${JSON.stringify(secret).slice(1, 12)}`)).toBe(
      `{"errMsg":"refused key ${fingerprint(secret, 'ak')}`,
    );
  });

  it('leaves a word that goes on past what it shares with a secret (a case id beside an embedded key)', () => {
    const scrub = createScrubber([{ kind: 'fk', value: 'forbidden-8f3a91c2d4' }]);
    expect(scrub.text('service/errors/forbidden-key/status')).toBe('service/errors/forbidden-key/status');
    expect(scrub.text('(HTTP 500: refused forbidden-8f3a)')).toBe(
      `(HTTP 500: refused ${fingerprint('forbidden-8f3a91c2d4', 'fk')})`,
    );
  });

  it('leaves a word that only shares a few first characters with a secret', () => {
    const scrub = createScrubber([{ kind: 'ak', value: 'ak-Live-7Qx9zR2mP4' }]);
    expect(scrub.text('ak-Lime shares five characters')).toBe('ak-Lime shares five characters');
  });
});

describe('createScrubber on a key whose lines were joined with spaces', () => {
  it('replaces the whole PEM block, armour included, by one fingerprint', () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const out = createScrubber([{ kind: 'pk', value: pem }]).text(`x-leak: ${pem.replace(/\s+/g, ' ')}`);
    expect(out).not.toMatch(/PRIVATE KEY/);
    expect(out).toBe(`x-leak: ${fingerprint(pem, 'pk')} `);
  });
});

describe('createScrubber on short secrets', () => {
  it('replaces a secret under 6 characters only as a whole word, so the text stays readable', () => {
    const scrub = createScrubber([{ kind: 'ak', value: 'k' }]);
    expect(scrub.text('cannot read private key nope.pem; sent X-API-KEY k')).toBe(
      `cannot read private key nope.pem; sent X-API-KEY ${fingerprint('k', 'ak')}`,
    );
  });
});

describe('scrubbing by value: any rendering of a secret, any 8-character window of it, any letter case', () => {
  const KEY = 'ak-Q7x/9Zp+2mWv"r&4';
  const shown = fingerprint(KEY, 'ak');
  const scrub = createScrubber([{ kind: 'ak', value: KEY }]);
  /** Every WINDOW-character run of the text, letter case folded. */
  const windowsOf = (text: string) =>
    Array.from({ length: Math.max(0, text.length - WINDOW + 1) }, (_, i) => text.slice(i, i + WINDOW).toLowerCase());

  it.each<[string, string]>([
    ['hex', Buffer.from(KEY).toString('hex')],
    ['upper-case hex', Buffer.from(KEY).toString('hex').toUpperCase()],
    ['Base64', Buffer.from(KEY).toString('base64')],
    ['Base64 inside a longer Base64 text (another alignment)', Buffer.from(`xy${KEY}tail`).toString('base64')],
    ['URL-safe Base64', Buffer.from(`z${KEY}`).toString('base64url')],
    ['upper-case raw', KEY.toUpperCase()],
    ['percent-encoded', encodeURIComponent(KEY)],
    ['JSON-escaped twice', JSON.stringify(JSON.stringify(KEY)).slice(1, -1)],
    ['its middle (a window cut out of it)', KEY.slice(5, 15)],
    ['the middle of its hex', Buffer.from(KEY).toString('hex').slice(7, 23)],
  ])('leaves no 8-character window of its %s', (_what, rendering) => {
    const out = scrub.text(`echo: ${rendering} end`);
    expect(out).toContain(shown);
    for (const window of windowsOf(rendering))
      expect(out.toLowerCase().includes(window), `${window} in ${out}`).toBe(false);
  });

  it('lists hex and Base64 at every alignment among the renderings', () => {
    const all = renderings(KEY);
    expect(all).toContain(Buffer.from(KEY).toString('hex'));
    const inside = Buffer.from(`a${KEY}`).toString('base64');
    expect(all.some((rendering) => rendering.length > 16 && inside.includes(rendering))).toBe(true);
  });

  it('keeps text that shares no 8-character window with a secret, and words its readable prefix spells', () => {
    const keyed = createScrubber([{ kind: 'fk', value: 'forbidden-8f3a91c2d4e5' }]);
    const text = 'service/errors/forbidden-key/status: the forbidden-key case; 8f3a = 8f3a';
    expect(keyed.text(text)).toBe(text);
  });

  it("scrubs a private key's private exponent and primes in any rendering, but not its public modulus", () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const jwk = privateKey.export({ format: 'jwk' });
    const keyed = createScrubber([{ kind: 'pk', value: pem }]);
    const d = Buffer.from(jwk.d!, 'base64url');
    const p = Buffer.from(jwk.p!, 'base64url');
    for (const leak of [
      d.toString('hex').toUpperCase(),
      jwk.dp!,
      p.toString('base64'),
      d.toString('hex').slice(40, 60),
    ]) {
      const out = keyed.text(`leaked ${leak} here`);
      for (const window of windowsOf(leak))
        expect(out.toLowerCase().includes(window), `${window} of a private part`).toBe(false);
    }
    const modulus = Buffer.from(publicKey.export({ format: 'jwk' }).n!, 'base64url').toString('hex');
    expect(keyed.text(`n = ${modulus}`)).toBe(`n = ${modulus}`);
  });

  it('scrubs the last characters of a Base64 rendering of a secret alone, partial last character included', () => {
    // 16 bytes: the Base64 ends in a character of 2 bits that, alone, nothing follows (JWK fields end so).
    const secret = 'q7-Rt9!xLm2#Vp4z';
    const scrub = createScrubber([{ kind: 'ak', value: secret }]);
    for (const encoded of [Buffer.from(secret).toString('base64url'), Buffer.from(secret).toString('base64')]) {
      const tail = encoded.replace(/=+$/, '').slice(-8);
      expect(scrub.text(`leaked ${tail} here`)).not.toContain(tail);
    }
  });

  it('keeps a fingerprint whole beside a Base64 rendering of the same secret (its letters are Base64 characters)', () => {
    const secret = 'sk_live_4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c';
    const scrub = createScrubber([{ kind: 'ak', value: secret }]);
    const shownHere = fingerprint(secret, 'ak');
    const base64 = Buffer.from(secret).toString('base64');
    // Before: `ak…#ak…#98e6`, the run `…<Base64>` took in the first fingerprint's hash digits.
    for (const input of [secret + base64, base64 + secret, `${secret}-${base64}`]) {
      expect(scrub.text(input)).toMatch(new RegExp(`^(${shownHere}-?)+=*$`));
    }
  });

  it("takes a Base64 rendering's last group (before its = padding), which no window of the secret holds, with the fingerprint", () => {
    const secret = 'sk_live_4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c';
    const scrub = createScrubber([{ kind: 'ak', value: secret }]);
    expect(scrub.text(`x ${secret}Ew== y`)).toBe(`x ${fingerprint(secret, 'ak')}== y`);
    expect(scrub.text(`x ${secret} Ew== y`)).toBe(`x ${fingerprint(secret, 'ak')} Ew== y`);
  });

  it('scrubs the private parts of a key given as PKCS#8 and as PKCS#1 (as the CLI registers it) with the one fingerprint shown', () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const pkcs8 = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const pkcs1 = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const keyed = createScrubber([
      { kind: 'ak', value: KEY },
      { kind: 'pk', value: pkcs1, shownAs: fingerprint(pkcs8, 'pk') },
      { kind: 'pk', value: pkcs8 },
    ]);
    const q = Buffer.from(privateKey.export({ format: 'jwk' }).q!, 'base64url');
    for (const leak of [q.toString('hex'), q.toString('base64'), pkcs1.split('\n')[2]!, pkcs8.split('\n')[3]!]) {
      const out = keyed.text(`leaked ${leak} here`);
      expect(out).toMatch(new RegExp(`^leaked (${fingerprint(pkcs8, 'pk')})+=* here$`));
      for (const window of windowsOf(leak))
        expect(out.toLowerCase().includes(window), `${window} of the key`).toBe(false);
    }
    expect(keyed.text(`and ${KEY}`)).toBe(`and ${shown}`);
  });
});
