import type { Command } from 'commander';
import { ConfigError } from '../core/errors.js';
import type { RsaPrivateKey } from '../crypto/keys.js';
import type { MerchantTarget } from '../runner/types.js';
import { CALLBACK_TYPE_TABLE, type CallbackTypeTable } from '../spec/callback-types.js';
import { parseInteger } from './options.js';
import { httpUrl } from './target-flags.js';
import type { NetworkFlags } from './network-options.js';
// Registration imports only flags.ts; the delivery (runner, crypto, the spec's fields) is imported by the action.
import { addNetworkOptions, secretFileOption, secretOption, sharedOption } from './flags.js';

interface SendFlags extends NetworkFlags {
  url: string;
  apiKey: string;
  privateKey: string;
  type: string;
  field: string[];
  deliveries: string;
  concurrent?: boolean;
  profile?: string;
}

/** `--field k=v`: a value that looks like a JSON number is sent as that exact number, else as a string. */
function parseField(text: string, fields: Record<string, string>): Record<string, string> {
  const at = text.indexOf('=');
  if (at < 1) throw new ConfigError('bad-flag', `--field takes key=value, not ${JSON.stringify(text)}`);
  const key = text.slice(0, at);
  const value = text.slice(at + 1);
  return { ...fields, [key]: /^-?\d+(\.\d+)?$/.test(value) ? `#decimal:${value}` : value };
}

/** One stderr line per `--field` the spec does not give this callback type: sent anyway (U-CB-FIELDS allows extra fields), but likely a typo. */
async function warnUnknownFields(type: number, names: string[]): Promise<void> {
  const { packagedCallbackFields } = await import('./callback-fields.js');
  const known = packagedCallbackFields(type);
  for (const name of names.filter((field) => !known.has(field))) {
    process.stderr.write(
      `warning: callback type ${type} has no field ${JSON.stringify(name)} (known: ${[...known].join(', ')}); sent anyway\n`,
    );
  }
}

/** A callback type's name as a flag value: `withdrawal request` is also `withdrawal-request` or `withdrawal_request`, any case. */
function typeSlug(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, '-');
}

/**
 * `--type` by number or by name from the callback type table (`deposit`, `withdrawal-request`, …);
 * anything else is one line listing the valid names and numbers.
 */
function parseCallbackType(text: string, table: CallbackTypeTable = CALLBACK_TYPE_TABLE): number {
  const byNumber = /^\d+$/.test(text.trim()) ? table.find((entry) => entry.type === Number(text.trim())) : undefined;
  const entry = byNumber ?? table.find((one) => typeSlug(one.name) === typeSlug(text));
  if (entry) return entry.type;
  throw new ConfigError(
    'bad-flag',
    `--type must be a callback type's name or number (${table.map((one) => `${typeSlug(one.name)} ${one.type}`).join(', ')}), not ${JSON.stringify(text)}`,
  );
}

/** `callback send`: delivers hand-made callbacks like the service would and prints each answer. */
export function registerCallbackCommand(program: Command): void {
  const callback = program.command('callback').description('deliver callbacks to a merchant endpoint by hand');
  addNetworkOptions(callback.command('send'), { runTimeout: false })
    .description('encrypt and deliver a callback (optionally duplicated or concurrent); prints each answer')
    .option('--url <url>', "the merchant's callback URL (required)")
    .addOption(secretOption('apiKey', 'X-API-KEY to send (required)'))
    .addOption(secretFileOption('apiKey'))
    .addOption(sharedOption('privateKey'))
    .requiredOption(
      '--type <name|n>',
      `callback type by name or number: ${CALLBACK_TYPE_TABLE.map((entry) => `${typeSlug(entry.name)} ${entry.type}`).join(', ')}`,
    )
    .option(
      '--field <key=value>',
      'set a payload field (repeatable)',
      (value: string, all: string[]) => [...all, value],
      [] as string[],
    )
    .option('--deliveries <n>', 'deliver the identical event this many times (fresh requestUUID each)', '1')
    .option('--concurrent', 'send the deliveries at the same moment')
    .addOption(sharedOption('profile'))
    .addOption(sharedOption('config'))
    .action(async (_given: SendFlags, command: Command) => {
      const { protectTarget, scrubOutput, settleFlags } = await import('./secrets.js');
      const flags = settleFlags<SendFlags>(command, {
        sections: ['merchant'],
        aliases: { callbackUrl: 'url' },
        secrets: { apiKey: true },
        required: ['url', 'privateKey'],
      });
      const type = parseCallbackType(flags.type);
      const deliveries = parseInteger(flags.deliveries, '--deliveries', { min: 1, max: 500 });
      const fields = flags.field.reduce<Record<string, string>>((all, text) => parseField(text, all), {});
      await warnUnknownFields(type, Object.keys(fields));
      const { loadKeyFile, loadProfile } = await import('./io.js');
      const { networkFromFlags } = await import('./network-options.js');
      const { makeStrangerKeys } = await import('../runner/stranger-keys.js');
      const { runDelivery } = await import('../runner/merchant-steps.js');
      const { isAcknowledged } = await import('../wire/acknowledgement.js');
      const privateKey = loadKeyFile(flags.privateKey, 'private') as RsaPrivateKey;
      networkFromFlags(flags);
      const target: MerchantTarget = {
        side: 'merchant',
        callbackUrl: httpUrl(flags.url, '--url'),
        apiKey: flags.apiKey,
        privateKey,
        profile: loadProfile(flags.profile),
      };
      protectTarget(target);
      const { exchanges } = await runDelivery(
        { type, fields, deliveries, concurrent: flags.concurrent ?? false },
        target,
        { caseId: 'cli', saved: {} },
        new Map(),
        makeStrangerKeys(privateKey.bits),
      );
      // A TLS failure is the toolkit not reaching the target (exit 2, one line), not the merchant's answer.
      const tlsError = exchanges.find((exchange) => exchange.error?.startsWith('TLS:'))?.error;
      if (tlsError && exchanges.every((exchange) => exchange.error))
        throw new ConfigError('tls', `--url ${flags.url}: ${tlsError}`);
      let failures = 0;
      for (const [i, exchange] of exchanges.entries()) {
        const answer = exchange.response
          ? `HTTP ${exchange.response.status} ${exchange.response.body}`
          : `no answer: ${exchange.error ?? ''}`;
        // Exit 0 only when every reading counts every answer (CB-ERRCODE): an ambiguous one (U-CB-RESPONSE) is not a clean pass.
        if (!isAcknowledged(exchange.response)) failures++;
        process.stdout.write(scrubOutput(`delivery ${i + 1}/${exchanges.length}: ${answer}\n`));
        if (i === 0) process.stdout.write(scrubOutput(`  payload ${exchange.payloadText ?? ''}\n`));
      }
      if (failures > 0) process.exitCode = 1;
    });
}
