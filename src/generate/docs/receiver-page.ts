import { stringifyExact } from '../../core/exact-json.js';
import { idempotencyOf, keyFieldsText } from './callback-page.js';
import type { DocsContext } from './docs-context.js';
import {
  boldText,
  codeText,
  heading,
  join,
  link,
  para,
  plainText,
  type Block,
  type Page,
  type Row,
  type Text,
} from './model.js';
import { isNode } from '../../spec/document.js';
import { aliasesOf, FIELD_ALIASES, type CallbackTypeTable } from '../../spec/callback-types.js';
import { objectView } from './schema-view.js';

/** Fields every payload carries; the per-type table lists the others. */
const COMMON = new Set(['type', 'requestUUID', 'trackingId', 'tenantUserId', 'business']);

/** The receiver of the merchant guide (docs/merchant-guide.md), on the package's public API (a test runs the guide's copy and keeps this one equal). */
export const RECEIVER_EXAMPLE = `// receiver.mjs: WALLET_API_KEY=… node receiver.mjs   (merchant-public.pem beside it)
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createCallbackHandler, LosslessNumber, MemoryIdempotencyStore, parseKey } from 'wallet-conformance';

const processed = []; // the probe: the exact decrypted text of each processed event

/** A decimal's exact digits as a BigInt count of 10^-18 units: "1.5" and "1.50" compare equal. */
const units = (amount) => {
  const [int, frac = ''] = String(amount).split('.'); // a LosslessNumber's String() is its literal digits
  return BigInt(int + frac.padEnd(18, '0').slice(0, 18));
};

const callback = createCallbackHandler({
  apiKeys: [process.env.WALLET_API_KEY],              // or [{ key, notBefore, notAfter }]
  publicKey: parseKey(readFileSync('merchant-public.pem'), { expect: 'public' }),
  store: new MemoryIdempotencyStore(),                 // openSqliteStore('callbacks.sqlite') survives restarts
  process: async ({ type, payload, text }) => {        // once per idempotency key, never per delivery
    if ((type === 1 || type === 3) && units(payload.amount) <= 0n) throw new Error('amount must be positive'); // errCode 500: retried
    if (payload.amount instanceof LosslessNumber) console.log(\`amount \${payload.amount.value}\`); // the JSON number's text
    processed.push(text);
  },
});

createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/probe') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(\`{"processed":[\${processed.join(',')}]}\`);
  } else if (req.url === '/callback') {
    callback(req, res);                                // key first, raw body, decrypt, validate, once
  } else {
    res.writeHead(404).end();
  }
}).listen(Number(process.env.PORT ?? 9400), '127.0.0.1');`;

/**
 * "Writing a receiver": what a merchant needs beyond the per-type pages: every type's fields in one
 * table, the answer, the processing probe's contract with an example built from the spec's own
 * callback examples, a receiver on the library, and what exact numbers mean in code.
 */
export function receiverPage(ctx: DocsContext): Page {
  // The types whose key needs a field spelt two ways (U-CB-FIELDS): deposits and withdrawals.
  const spelt = ctx.callbackTable.filter((entry) => entry.key.fields.some((field) => aliasesOf(field).length > 0));
  const blocks: Block[] = [
    ...typesSection(ctx, spelt),
    ...answerAndProbe(probeAnswer(ctx, spelt)),
    ...libraryAndNumbers(),
  ];
  return {
    id: 'receiver',
    title: 'Writing a callback receiver',
    nav: 'Writing a receiver',
    group: 'callbacks',
    blocks,
  };
}

/** The common fields, then one row per callback type with its own fields and idempotency key. */
function typesSection(ctx: DocsContext, spelt: CallbackTypeTable): Block[] {
  const rows: Row[] = ctx.callbacks.map((callback) => {
    const view = objectView(ctx.model.flatten(callback.schemaName));
    const own = view.fields.filter((field) => field.depth === 0 && !COMMON.has(field.path));
    const key = idempotencyOf(view);
    const fields: Text = join(own.map((field) => [field.required ? boldText(field.path) : codeText(field.path)]));
    return {
      id: `receiver-type-${callback.type}`,
      cells: [
        [plainText(String(callback.type))],
        [link(callback.pageId, callback.label)],
        fields.length > 0 ? fields : [plainText('—')],
        key ? [plainText(keyFieldsText(key))] : [plainText('—')],
      ],
    };
  });
  return [
    para(
      plainText("The service POSTs each event to the merchant's callback URL: header "),
      codeText('X-API-KEY'),
      plainText(
        " (the merchant's own key), body the raw Base64 text of the RSA-encrypted JSON payload (not a form field). Every payload carries ",
      ),
      codeText('type'),
      plainText(', '),
      codeText('requestUUID'),
      plainText(' (new on every delivery, retries included: never an idempotency key), '),
      codeText('trackingId'),
      plainText(' (the same for every delivery of one event), '),
      codeText('tenantUserId'),
      plainText(' and '),
      codeText('business'),
      plainText('; extra fields are allowed.'),
    ),
    heading(2, 'types', 'Fields per callback type'),
    para(
      plainText(
        `Bold fields are required; ${spelt.map((entry) => `${entry.name}s`).join(' and ')} (types ${spelt.map((entry) => entry.type).join(' and ')}) also need `,
      ),
      ...join(
        Object.entries(FIELD_ALIASES).map(([field, aliases]) =>
          join(
            [field, ...aliases].map((name) => [codeText(name)]),
            plainText(' or '),
          ),
        ),
        plainText(', and '),
      ),
      plainText(" (the provider's spelling of the same fields)."),
    ),
    {
      kind: 'table',
      id: 'receiver-types',
      columns: ['type', 'callback', 'fields besides the common ones', 'idempotency key'],
      rows,
    },
  ];
}

/** The probe's answer after a deposit and a withdrawal: the spec's own examples, exact digits. */
function probeAnswer(ctx: DocsContext, spelt: CallbackTypeTable): string {
  const samples = ctx.callbacks
    .filter((callback) => spelt.some((entry) => entry.type === callback.type))
    .map((callback) => objectView(ctx.model.flatten(callback.schemaName)).examples[0])
    .filter(isNode);
  return `{"processed":[\n  ${samples.map((sample) => stringifyExact(sample)).join(',\n  ')}\n]}`;
}

/** What the merchant answers, and the processing probe the idempotency checks read. */
function answerAndProbe(probeExample: string): Block[] {
  return [
    heading(2, 'answer', "The merchant's answer"),
    para(
      plainText('HTTP 200 with a JSON object whose '),
      codeText('errCode'),
      plainText(' is the number 0 means processed, or a duplicate acknowledged; anything else (another status, no '),
      codeText('errCode'),
      plainText(', the string "0") is a failure that the service retries. A failed '),
      codeText('X-API-KEY'),
      plainText(' check is HTTP 401, answered before the body is read.'),
    ),
    heading(2, 'probe', 'The processing probe'),
    para(
      plainText('Idempotency cannot be judged from answers alone. For '),
      codeText('verify merchant --probe-url U'),
      plainText(', the merchant exposes '),
      codeText('GET U'),
      plainText(' answering '),
      codeText('{"processed": [...]}'),
      plainText(
        ': one entry each time business processing ran (a skipped duplicate adds none), in processing order, each the decrypted payload exactly as received, every field, numbers with their digits. Without a probe the checks that need it are skipped, never passed.',
      ),
    ),
    {
      kind: 'code',
      title: [plainText('GET {probe-url} after a deposit and a withdrawal')],
      language: 'json',
      text: probeExample,
    },
  ];
}

/** A receiver on the library, what exact numbers mean in code, and the command that verifies it. */
function libraryAndNumbers(): Block[] {
  return [
    heading(2, 'receiver', 'A receiver on the library'),
    {
      kind: 'code',
      title: [plainText('receiver.mjs (npm install wallet-conformance)')],
      language: 'text',
      text: RECEIVER_EXAMPLE,
    },
    heading(2, 'exact-numbers', 'Exact numbers'),
    para(
      plainText('A JSON number in a payload arrives as a '),
      codeText('LosslessNumber'),
      plainText(' (lossless-json, re-exported by the package): '),
      codeText('.value'),
      plainText(' and '),
      codeText('String()'),
      plainText(' are its literal digits; a decimal string stays a string. '),
      codeText('Number(amount)'),
      plainText(' would round '),
      codeText('12345678901234567890.123'),
      plainText(
        ". Compare the text when the digits must match, or scaled BigInts when 1.5 and 1.50 mean the same. The event's ",
      ),
      codeText('text'),
      plainText(' is the decrypted JSON exactly as received: what the probe hands back.'),
    ),
    heading(2, 'verify', 'Verify it'),
    {
      kind: 'code',
      language: 'sh',
      text: 'WALLET_API_KEY=... npx wallet-conformance verify merchant --callback-url http://127.0.0.1:9400/callback \\\n  --probe-url http://127.0.0.1:9400/probe --private-key merchant-private.pem',
    },
  ];
}
