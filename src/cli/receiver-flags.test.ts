import { describe, expect, it } from 'vitest';
import { receiverAddress } from './receiver-flags.js';
import { refusal } from '../../test/support/refusal.js';

describe('--listen-host and --public-url of the callback receiver', () => {
  it.each<[{ listenHost?: string; publicUrl?: string }, { listenHost?: string; publicUrl?: string }]>([
    [{}, {}],
    [{ listenHost: '127.0.0.1' }, { listenHost: '127.0.0.1' }],
    [{ listenHost: ' 0.0.0.0 ' }, { listenHost: '0.0.0.0' }],
    [{ listenHost: '[::1]' }, { listenHost: '::1' }],
    [{ listenHost: '::' }, { listenHost: '::' }],
    [{ listenHost: 'receiver.ci-net.internal' }, { listenHost: 'receiver.ci-net.internal' }],
    [{ listenHost: 'localhost' }, { listenHost: 'localhost' }],
    [{ publicUrl: 'http://runner:8080/callback' }, { publicUrl: 'http://runner:8080/callback' }],
    [{ publicUrl: 'https://tunnel.example/hook' }, { publicUrl: 'https://tunnel.example/hook' }],
    [
      { listenHost: '10.0.0.5', publicUrl: 'http://10.0.0.5:9000/' },
      { listenHost: '10.0.0.5', publicUrl: 'http://10.0.0.5:9000/' },
    ],
  ])('takes %j', (flags, address) => {
    expect(receiverAddress(flags)).toEqual(address);
  });

  it.each<[{ listenHost?: string; publicUrl?: string }, string, string]>([
    [{ listenHost: 'http://host' }, 'bad-flag', '--listen-host takes an IP address or a host name, not "http://host"'],
    [{ listenHost: 'host:8080' }, 'bad-flag', '--listen-host takes an IP address or a host name, not "host:8080"'],
    [{ listenHost: '-host' }, 'bad-flag', '--listen-host takes an IP address or a host name, not "-host"'],
    [{ listenHost: '' }, 'bad-flag', '--listen-host takes an IP address or a host name, not ""'],
    [{ listenHost: 'a..b' }, 'bad-flag', '--listen-host takes an IP address or a host name, not "a..b"'],
    [
      { publicUrl: 'runner:8080/callback' },
      'bad-url',
      '--public-url must be an http:// or https:// URL without credentials (where the service reaches the receiver), not "runner:8080/callback"',
    ],
    [
      { publicUrl: 'ftp://runner/callback' },
      'bad-url',
      '--public-url must be an http:// or https:// URL without credentials (where the service reaches the receiver), not "ftp://runner/callback"',
    ],
    [
      { publicUrl: 'not a url' },
      'bad-url',
      '--public-url must be an http:// or https:// URL without credentials (where the service reaches the receiver), not "not a url"',
    ],
  ])('refuses %j in one line', (flags, reason, message) => {
    expect(refusal(() => receiverAddress(flags))).toEqual([reason, message]);
  });

  it.each([['http://user:s3cret@runner/cb'], ['https://s3cret@runner:8443/cb?x=1'], ['http://:s3cret@runner/']])(
    'refuses credentials in %j without repeating them',
    (publicUrl) => {
      const [reason, message] = refusal(() => receiverAddress({ publicUrl }))!;
      expect(reason).toBe('bad-url');
      expect(message).toBe(
        `--public-url must be an http:// or https:// URL without credentials (where the service reaches the receiver), not ${JSON.stringify(publicUrl.replace(/\/\/[^@]*@/, '//…@'))}`,
      );
      expect(message).not.toContain('s3cret');
    },
  );
});
