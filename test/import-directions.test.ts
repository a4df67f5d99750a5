/**
 * The import directions of ARCHITECTURE.md as eslint.config.js enforces them: each rule refuses the
 * wrong direction and lets the right one through, so a broken pattern cannot pass `npm run lint`
 * silently. src/msw and src/emulator are two adapters over src/service: neither imports the other.
 */
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';

const eslint = new ESLint({ cwd: ROOT });

/** The import-direction messages ESLint gives `source` as if it were the file at `path`. */
async function refusals(path: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${source}\n`, { filePath: join(ROOT, path) });
  return result!.messages
    .filter((message) => message.ruleId?.endsWith('no-restricted-imports'))
    .map((message) => message.message);
}

const refused = (what: string) => [expect.stringContaining(what)];

describe('import directions (eslint.config.js)', () => {
  it.each<[string, string, string, string[]]>([
    [
      'src/core imports no other layer',
      'src/core/x.ts',
      "import '../crypto/codec.js';",
      refused('src/core may import only itself and src/generated/validators.js'),
    ],
    ['src/core reads the generated validators', 'src/core/x.ts', "import '../generated/validators.js';", []],
    [
      'src/core is pure: no platform',
      'src/core/x.ts',
      "import '../platform/sqlite.js';",
      refused('src/core may import only itself'),
    ],
    [
      'src/core is pure: no scrubber',
      'src/core/x.ts',
      "import '../secrets/scrub.js';",
      refused('src/core may import only itself'),
    ],
    [
      'src/core is pure: no node: module',
      'src/core/x.ts',
      "import { readFileSync } from 'node:fs';",
      refused('src/core imports no node: module'),
    ],
    ['src/platform builds on src/core', 'src/platform/x.ts', "import '../core/errors.js';", []],
    [
      'src/platform imports no layer above it',
      'src/platform/x.ts',
      "import '../crypto/codec.js';",
      refused('src/platform may import only src/core'),
    ],
    [
      'src/secrets stands alone',
      'src/secrets/x.ts',
      "import '../core/errors.js';",
      refused('src/secrets may import only itself'),
    ],
    ['the runner fingerprints through src/secrets', 'src/runner/x.ts', "import '../secrets/scrub.js';", []],
    [
      'src/spec does not scrub',
      'src/spec/x.ts',
      "import '../secrets/scrub.js';",
      refused('src/spec may import only src/core, src/platform'),
    ],
    [
      'src/core does not read the generated MSW handlers',
      'src/core/x.ts',
      "import '../generated/msw-handlers.js';",
      refused('src/core may import only'),
    ],
    ['src/spec imports src/core', 'src/spec/x.ts', "import '../core/errors.js';", []],
    [
      'src/spec imports nothing else',
      'src/spec/x.ts',
      "import '../crypto/codec.js';",
      refused('src/spec may import only src/core'),
    ],
    [
      'src/core does not import src/spec (the callback type table lives above it)',
      'src/core/x.ts',
      "import '../spec/callback-types.js';",
      refused('src/core may import only itself'),
    ],
    ['src/generate reads the spec through src/spec', 'src/generate/docs/x.ts', "import '../../spec/model.js';", []],
    [
      'src/merchant takes its idempotency keys from the callback type table',
      'src/merchant/x.ts',
      "import '../spec/callback-types.js';",
      [],
    ],
    [
      'src/reporters do not read the spec',
      'src/reporters/x.ts',
      "import '../spec/model.js';",
      refused('src/reporters may import only src/core'),
    ],
    ['src/crypto imports src/core', 'src/crypto/x.ts', "import '../core/errors.js';", []],
    [
      'src/crypto imports nothing else',
      'src/crypto/x.ts',
      "import '../net/proxy.js';",
      refused('src/crypto may import only src/core'),
    ],
    [
      'src/reporters take types from src/runner',
      'src/reporters/x.ts',
      "import type { Report } from '../runner/types.js';",
      [],
    ],
    [
      'src/reporters take no runner code',
      'src/reporters/x.ts',
      "import { runSuites } from '../runner/engine.js';",
      refused('src/reporters may import only src/core, src/wire and types from src/runner'),
    ],
    [
      'nothing imports src/cli, from any depth',
      'src/runner/checks/x.ts',
      "import '../../cli/main.js';",
      refused('Nothing imports src/cli'),
    ],
    [
      'src/runner does not import the emulator',
      'src/runner/checks/x.ts',
      "import '../../emulator/server.js';",
      refused('src/runner may import only src/core, src/crypto, src/net'),
    ],
    [
      'src/runner sends control requests through the generated control-API client',
      'src/runner/x.ts',
      "import '../generated/control-client.js';",
      [],
    ],
    [
      'src/runner reads no other generated file',
      'src/runner/x.ts',
      "import '../generated/msw-handlers.js';",
      refused(
        'src/runner may import only src/core, src/crypto, src/net, src/platform, src/secrets, src/spec, src/wire and src/generated/control-client.js',
      ),
    ],
    [
      'the Pact verifier arranges provider states through the generated control-API client',
      'src/generate/pact/x.ts',
      "import '../../generated/control-client.js';",
      [],
    ],
    [
      'src/load does not read the generated control-API client',
      'src/load/x.ts',
      "import '../generated/control-client.js';",
      refused('src/load may import only'),
    ],
    [
      'src/msw does not import the emulator',
      'src/msw/x.ts',
      "import '../emulator/store.js';",
      refused('src/msw may import only src/core, src/crypto, src/generated, src/service'),
    ],
    ['src/msw imports the service', 'src/msw/x.ts', "import '../service/operations.js';", []],
    ['src/emulator imports the service', 'src/emulator/x.ts', "import '../service/operations.js';", []],
    [
      'src/emulator does not import msw',
      'src/emulator/x.ts',
      "import '../msw/operations.js';",
      refused('src/emulator may import only src/core, src/crypto, src/net, src/platform, src/secrets, src/service'),
    ],
    [
      'src/service imports src/core and src/crypto',
      'src/service/x.ts',
      "import '../core/errors.js';\nimport '../crypto/codec.js';",
      [],
    ],
    [
      'src/service does not import its adapters',
      'src/service/x.ts',
      "import '../emulator/store.js';",
      refused('src/service may import only src/core, src/crypto'),
    ],
    [
      'src/service does not import the network layer',
      'src/service/x.ts',
      "import '../net/proxy.js';",
      refused('src/service may import only src/core, src/crypto'),
    ],
    [
      'src/wire imports src/core and src/crypto',
      'src/wire/x.ts',
      "import '../core/errors.js';\nimport '../crypto/codec.js';",
      [],
    ],
    [
      'src/wire does not read the spec',
      'src/wire/x.ts',
      "import '../spec/callback-types.js';",
      refused('src/wire may import only src/core, src/crypto ('),
    ],
    [
      'src/wire imports no transport layer',
      'src/wire/x.ts',
      "import '../net/proxy.js';",
      refused('src/wire may import only src/core, src/crypto ('),
    ],
    [
      'src/wire does not import its users',
      'src/wire/x.ts',
      "import '../emulator/dispatcher.js';",
      refused('src/wire may import only src/core, src/crypto ('),
    ],
    [
      'src/core does not import src/wire',
      'src/core/x.ts',
      "import '../wire/acknowledgement.js';",
      refused('src/core may import only itself'),
    ],
    [
      'the service, its adapters, the runner, the load tool and the properties import src/wire',
      'src/service/x.ts',
      "import '../wire/crypto-failure.js';",
      [],
    ],
    ['src/load reads answers through src/wire', 'src/load/x.ts', "import '../wire/acknowledgement.js';", []],
    [
      'src/reporters read a callback answer through src/wire',
      'src/reporters/x.ts',
      "import '../wire/acknowledgement.js';",
      [],
    ],
    [
      'src/service imports no transport',
      'src/service/x.ts',
      "import { createServer } from 'node:http';",
      refused('src/service imports no node:http'),
    ],
    [
      'src/service imports no msw',
      'src/service/x.ts',
      "import { http } from 'msw';",
      refused('src/service imports no node:http'),
    ],
    [
      'src/service imports no database',
      'src/service/x.ts',
      "import Database from 'better-sqlite3';",
      refused('src/service imports no node:http'),
    ],
    [
      'src/service imports no built-in database either',
      'src/service/x.ts',
      "import { DatabaseSync } from 'node:sqlite';",
      refused('src/service imports no node:http'),
    ],
    [
      'src/property uses the runner through its public API',
      'src/property/x.ts',
      "import { runRequest } from '../runner/api.js';",
      [],
    ],
    [
      'src/property does not reach into the runner',
      'src/property/x.ts',
      "import { runRequest } from '../runner/service-steps.js';",
      refused('src/property imports src/runner only through its public API, src/runner/api.ts'),
    ],
    [
      'src/observe does not reach into the runner, types neither',
      'src/observe/x.ts',
      "import type { Exchange } from '../runner/observation.js';",
      refused('src/observe imports src/runner only through its public API, src/runner/api.ts'),
    ],
    ['other layers may use node:http', 'src/emulator/x.ts', "import { createServer } from 'node:http';", []],
    [
      'package names are not layers',
      'src/msw/x.ts',
      "import { http } from 'msw';\nimport { setupServer } from 'msw/node';",
      [],
    ],
    [
      'a unit test beside the code may wire layers together',
      'src/core/x.test.ts',
      "import '../emulator/codes.js';",
      [],
    ],
    [
      'a unit test beside the code does not import src/cli',
      'src/core/x.test.ts',
      "import '../cli/main.js';",
      refused('Nothing imports cli'),
    ],
    [
      'an example does not import src/cli',
      'examples/x.ts',
      "import '../src/cli/main.js';",
      refused('Nothing imports cli'),
    ],
    [
      'a command module imports no other command module',
      'src/cli/pact-command.ts',
      "import { registerVerifyCommand } from './verify-command.js';",
      refused('A command module imports no other command module'),
    ],
    [
      'a command module imports the shared flags',
      'src/cli/pact-command.ts',
      "import { sharedOption } from './flags.js';",
      [],
    ],
    [
      'the program imports every command module',
      'src/cli/main.ts',
      "import { registerVerifyCommand } from './verify-command.js';",
      [],
    ],
  ])('%s', async (_name, path, source, expected) => {
    expect(await refusals(path, source)).toEqual(expected);
  });
});
