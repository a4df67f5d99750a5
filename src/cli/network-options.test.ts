import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { networkFromFlags, type NetworkFlags } from './network-options.js';
import { networkNote } from '../net/network-config.js';
import { refusal } from '../../test/support/refusal.js';
import { makeThrowawayCa } from '../crypto/throwaway-certificates.js';

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const dir = mkdtempSync(join(tmpdir(), 'wc-network-flags-'));
const write = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('the network flags, checked before anything is sent', () => {
  const notPem = write('notes.txt', 'just some notes\n');
  const missing = join(dir, 'missing.pem');

  it.each<[string, NetworkFlags, string, string | RegExp]>([
    [
      '--cert without --key',
      { cert: 'c.pem' },
      'bad-flag',
      'a client certificate needs both --cert FILE and --key FILE',
    ],
    [
      '--key without --cert',
      { key: 'k.pem' },
      'bad-flag',
      'a client certificate needs both --cert FILE and --key FILE',
    ],
    ['a --ca that is not there', { ca: [missing] }, 'unreadable-file', `--ca ${missing} cannot be read: ENOENT`],
    [
      'a --ca with no certificate in it',
      { ca: [notPem] },
      'bad-certificate',
      `--ca ${notPem} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
    ],
    ['--max-body 0', { maxBody: '0' }, 'bad-flag', '--max-body must be between 1 and ∞, not 0'],
    ['--max-body 1MB', { maxBody: '1MB' }, 'bad-flag', '--max-body takes a whole number, not "1MB"'],
    ['--timeout 0', { timeout: '0' }, 'bad-flag', '--timeout takes a positive number of seconds, not "0"'],
    ['--timeout 5m', { timeout: '5m' }, 'bad-flag', '--timeout takes a positive number of seconds, not "5m"'],
    ['--timeout -1', { timeout: '-1' }, 'bad-flag', '--timeout takes a positive number of seconds, not "-1"'],
  ])('refuses %s in one line', (_what, flags, reason, message) => {
    const [gotReason, gotMessage] = refusal(() => networkFromFlags(flags, { env: {}, warn: () => {} }))!;
    expect(gotReason).toBe(reason);
    if (typeof message === 'string') expect(gotMessage).toBe(message);
    else expect(gotMessage).toMatch(message);
  });

  it('refuses a --ca block that is no certificate, naming which one, and takes a bundle of good ones', () => {
    const ca = makeThrowawayCa();
    const garbage = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';
    const alone = write('garbage.pem', garbage);
    const [reason, message] = refusal(() => networkFromFlags({ ca: [alone] }, { env: {}, warn: () => {} }))!;
    expect(reason).toBe('bad-certificate');
    expect(message).toMatch(new RegExp(`^--ca ${escape(alone)}: its certificate cannot be read: [^\\n]+$`));
    const mixed = write('mixed.pem', `${ca.cert}\n${garbage}`);
    expect(refusal(() => networkFromFlags({ ca: [mixed] }, { env: {}, warn: () => {} }))?.[1]).toMatch(
      /: certificate 2 of 2 cannot be read: /,
    );
    const bundle = [ca.cert, makeThrowawayCa('second').cert];
    const good = write('good.pem', bundle.join('\n'));
    expect(
      networkFromFlags({ ca: [good] }, { env: {}, warn: () => {} })
        .tls.extraCa.slice(-2)
        .map((pem) => pem.trim()),
    ).toEqual(bundle.map((pem) => pem.trim()));
  });

  it("a --cert and --key that are no pair name the files and OpenSSL's reason, never the key", () => {
    const cert = write('cert.pem', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    const key = write(
      'key.pem',
      '-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1tYXRlcmlhbA==\n-----END PRIVATE KEY-----\n',
    );
    const [reason, message] = refusal(() => networkFromFlags({ cert, key }, { env: {}, warn: () => {} }))!;
    expect(reason).toBe('bad-certificate');
    expect(message).toMatch(
      new RegExp(`^--cert ${cert.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} and --key .* are not a usable pair: [^\\n]+$`),
    );
    expect(message).not.toContain('c2VjcmV0');
  });

  it('--insecure warns once, in one line, and --max-body sets the cap', () => {
    const warnings: string[] = [];
    const network = networkFromFlags(
      { insecure: true, maxBody: '2048' },
      { env: {}, warn: (line) => warnings.push(line) },
    );
    expect(warnings).toEqual([
      'wallet-conformance: warning: --insecure: TLS certificates are not verified; the reports note it',
    ]);
    expect([network.tls.insecure, network.maxBodyBytes]).toEqual([true, 2048]);
  });
});

describe("the report's network note", () => {
  it('names TLS settings only when the target speaks https', () => {
    const network = networkFromFlags({ insecure: true }, { env: {}, warn: () => undefined });
    expect(networkNote(network, { side: 'merchant', callbackUrl: 'http://127.0.0.1:8080/callback' })).toEqual({});
    expect(networkNote(network, { side: 'merchant', callbackUrl: 'https://merchant.example/callback' })).toMatchObject({
      tls: { insecure: true },
    });
  });
});
