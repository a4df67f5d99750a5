import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import {
  addNetworkOptions,
  collectCases,
  collectDirs,
  CONFIG_FILE_NAME,
  CONFIG_HELP,
  SECRETS,
  secretFileHelp,
  secretFileOption,
  secretHelp,
  secretOption,
  sharedOption,
} from './flags.js';

describe('the collectors of repeatable flags', () => {
  it.each<[string[], string[]]>([
    [['a/b'], ['a/b']],
    [['a/b,c/d'], ['a/b', 'c/d']],
    [
      [' a/b , ,c/d ', 'e'],
      ['a/b', 'c/d', 'e'],
    ],
    [[',,'], []],
  ])('--case %j collects %j', (values, ids) => {
    expect(values.reduce<string[]>((all, value) => collectCases(value, all), [])).toEqual(ids);
    expect(collectCases(values[0]!)).toEqual(collectCases(values[0]!, []));
  });

  it('--suites keeps every folder as given, commas included, in order', () => {
    expect(['one', 'two,three', 'one'].reduce<string[]>((all, value) => collectDirs(value, all), [])).toEqual([
      'one',
      'two,three',
      'one',
    ]);
  });

  it('--case and --suites collect on a real command line', () => {
    const program = new Command()
      .exitOverride()
      .option('--case <id>', '', collectCases)
      .option('--suites <dir>', '', collectDirs, []);
    program.parse(['--case', 'a/x,b/y', '--suites', 'd1', '--case', 'c/z', '--suites', 'd2'], { from: 'user' });
    expect(program.opts()).toEqual({ case: ['a/x', 'b/y', 'c/z'], suites: ['d1', 'd2'] });
  });
});

describe('the network flags', () => {
  const parse = (argv: string[], options?: { runTimeout?: boolean }) => {
    const command = addNetworkOptions(new Command().exitOverride().configureOutput({ writeErr: () => {} }), options);
    return command.parse(argv, { from: 'user' }).opts();
  };

  it('reads --ca (repeatable), --cert, --key, --insecure, --max-body and --timeout as given; the checks come later', () => {
    expect(
      parse([
        '--ca',
        'a.pem',
        '--ca',
        'b.pem',
        '--cert',
        'c.pem',
        '--key',
        'k.pem',
        '--insecure',
        '--max-body',
        '1024',
        '--timeout',
        '30',
      ]),
    ).toEqual({
      ca: ['a.pem', 'b.pem'],
      cert: 'c.pem',
      key: 'k.pem',
      insecure: true,
      maxBody: '1024',
      timeout: '30',
    });
  });

  it('leaves --timeout out of commands that write no reports', () => {
    expect(() => parse(['--timeout', '30'], { runTimeout: false })).toThrow("error: unknown option '--timeout'");
    expect(parse(['--insecure'], { runTimeout: false })).toEqual({ insecure: true });
  });
});

describe('the secrets', () => {
  it('each have a value flag, a file flag, a variable and a config key of their own', () => {
    const specs = Object.values(SECRETS);
    for (const field of ['kind', 'flag', 'fileFlag', 'env', 'configKey'] as const)
      expect(new Set(specs.map((spec) => spec[field])).size).toBe(specs.length);
    for (const spec of specs) {
      expect(spec.fileFlag).toBe(`${spec.flag}-file`);
      expect(spec.configKey.endsWith('File')).toBe(true);
    }
  });

  it('say in their help how to keep them out of argv', () => {
    expect(secretHelp('apiKey', 'the merchant API key')).toBe(
      'the merchant API key; better env WALLET_API_KEY or --api-key-file (ps and CI logs show argv)',
    );
    expect(secretFileHelp('brokerToken')).toBe(
      'read the Pact Broker token from this file (one trailing newline is dropped)',
    );
  });

  it('--config names the default file it reads', () => {
    expect(CONFIG_HELP).toContain(`default: ./${CONFIG_FILE_NAME} when present`);
  });
});

describe('the registry of shared flags', () => {
  it('gives every command the same flag, collector and default, worded for the command when it asks', () => {
    const one = new Command().exitOverride().addOption(sharedOption('suites')).addOption(sharedOption('reports'));
    const other = new Command()
      .exitOverride()
      .addOption(sharedOption('suites', 'my own words'))
      .addOption(sharedOption('reports', 'where mine go'));
    one.parse(['--suites', 'a', '--suites', 'b'], { from: 'user' });
    other.parse([], { from: 'user' });
    expect(one.opts()).toEqual({ suites: ['a', 'b'], reports: 'reports' });
    expect(other.opts()).toEqual({ suites: [], reports: 'reports' });
    expect(other.options.map((option) => option.description)).toEqual(['my own words', 'where mine go']);
  });

  it('writes a secret pair from its spec: the value flag, its file flag, help that keeps it out of argv', () => {
    const command = new Command()
      .exitOverride()
      .addOption(secretOption('controlToken', 'the token'))
      .addOption(secretFileOption('controlToken'));
    expect(command.options.map((option) => [option.flags, option.description])).toEqual([
      ['--control-token <token>', secretHelp('controlToken', 'the token')],
      ['--control-token-file <file>', secretFileHelp('controlToken')],
    ]);
    expect(secretOption('apiKey', 'as I wrote it', { asWritten: true }).description).toBe('as I wrote it');
  });
});
