import fc, { type Arbitrary } from 'fast-check';
import { LosslessNumber, parseExactJson, stringifyExact, type ExactJson } from '../core/exact-json.js';
import type { Exchange } from '../runner/api.js';
import { CALLBACK_TYPE_TABLE, FIELD_ALIASES } from '../spec/callback-types.js';
import { callbackValueRules } from './refinements.js';
import { componentSchema, deriveArbitrary, type StringFlavour } from './schema-arbitrary.js';
import type { Property, Verdict, Warning } from './property.js';
import { plaintextBlockSize } from '../core/profile.js';
import { callbackEdgeExamples, padToEdge } from './callback-edges.js';
import type { BlockEdge } from './edge-values.js';
import { acknowledgementOf, deliverEvent, probeSince, uniqueEvent, type MerchantEnv } from './merchant-exchange.js';

/** The callback schemas of the spec, one per type of the callback type table. */
const TYPE_SCHEMAS = CALLBACK_TYPE_TABLE.map((entry) => entry.schema);

/**
 * A generated event; `twin` makes it a wrapped-contract twin of an earlier deposit (same txid,
 * another symbol); `length` puts its plaintext at a block edge (the edge cases, callback-edges.ts).
 */
interface GeneratedEvent {
  payload: Record<string, ExactJson>;
  twin: boolean;
  length?: BlockEdge;
}

/** A delivery of the schedule: which event, how many identical copies at once, and where it falls in the order. */
interface ScheduledDelivery {
  event: number;
  copies: number;
  at: number;
}

/** A sequence of events and their deliveries (every event once, then redeliveries interleaved). */
interface CallbackSequence {
  events: GeneratedEvent[];
  redeliveries: ScheduledDelivery[];
}

/**
 * Random valid callbacks of every type, fields and spellings drawn from the spec's schemas; one in
 * three with any Unicode in its free-text fields (astral characters, combining sequences, CJK), as
 * a tenant's name or an address label may hold. No string field is blank (callbackValueRules).
 */
export function callbackArbitrary(): Arbitrary<Record<string, ExactJson>> {
  const of = (strings: StringFlavour) => {
    const refine = callbackValueRules({ strings });
    return fc.oneof(
      ...TYPE_SCHEMAS.map(
        (name) => deriveArbitrary(componentSchema(name), { refine, strings }) as Arbitrary<Record<string, ExactJson>>,
      ),
    );
  };
  return fc.oneof({ arbitrary: of('ascii'), weight: 2 }, { arbitrary: of('unicode'), weight: 1 });
}

let sequences: Arbitrary<CallbackSequence> | undefined;

/**
 * The sequences the property draws, built on first use: deriving them reads the spec's schemas,
 * which a CLI run without `--generate` never needs (it would parse the spec at import).
 */
function sequenceArbitrary(): Arbitrary<CallbackSequence> {
  sequences ??= fc.record({
    events: fc.array(fc.record({ payload: callbackArbitrary(), twin: fc.boolean() }), { minLength: 1, maxLength: 6 }),
    redeliveries: fc.array(fc.record({ event: fc.nat(5), copies: fc.integer({ min: 1, max: 3 }), at: fc.nat(20) }), {
      maxLength: 6,
    }),
  });
  return sequences;
}

const PROVIDER: Record<string, string> = { txId: 'txid', chainName: 'chain' };

/** The sequence with every field spelt as the interface spells it (txid, chain). */
function interfaceSpelling(sequence: CallbackSequence): CallbackSequence {
  const respell = (payload: Record<string, ExactJson>) =>
    Object.fromEntries(
      Object.entries(payload).map(([name, value]) => [
        PROVIDER[name] && !(PROVIDER[name]! in payload) ? PROVIDER[name]! : name,
        value,
      ]),
    );
  return { ...sequence, events: sequence.events.map((event) => ({ ...event, payload: respell(event.payload) })) };
}

/**
 * The sequence without spellings that disagree: where a payload carries both txid and txId (or chain
 * and chainName) with different values, the provider's spelling is dropped. The schema lets a
 * payload carry both; what a receiver does when they differ is open (U-CB-FIELDS): the toolkit reads
 * the interface's spelling, and a receiver that refuses such a payload gets a warning, not a failure.
 */
function agreeingSpellings(sequence: CallbackSequence): CallbackSequence {
  const agree = (payload: Record<string, ExactJson>) => {
    const kept = { ...payload };
    for (const [name, aliases] of Object.entries(FIELD_ALIASES))
      for (const alias of aliases)
        if (name in kept && alias in kept && stringifyExact(kept[name]!) !== stringifyExact(kept[alias]!))
          delete kept[alias];
    return kept;
  };
  return { ...sequence, events: sequence.events.map((event) => ({ ...event, payload: agree(event.payload) })) };
}

/** A JSON number's grammar: a decimal string that can be written as a number with the same digits. */
const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/** The sequence with every amount spelt one way (U-CB-FIELDS: a JSON number or a decimal string), digits kept. */
export function amountsAs(sequence: CallbackSequence, form: 'number' | 'string'): CallbackSequence {
  const respell = (payload: Record<string, ExactJson>): Record<string, ExactJson> => {
    const amount = payload.amount;
    if (form === 'string' && amount instanceof LosslessNumber) return { ...payload, amount: amount.value };
    if (form === 'number' && typeof amount === 'string' && JSON_NUMBER.test(amount))
      return { ...payload, amount: new LosslessNumber(amount) };
    return payload;
  };
  return { ...sequence, events: sequence.events.map((event) => ({ ...event, payload: respell(event.payload) })) };
}

/** The rule of an event's idempotency key. */
function keyRule(payload: Record<string, ExactJson>): string {
  const type = Number(String(payload.type));
  return type === 1 ? 'CB-ID-DEPOSIT' : type === 3 ? 'CB-ID-WITHDRAW' : 'CB-ID-OTHER';
}

/**
 * The events to send: every generated event made unique; a twin takes the txid of the latest
 * deposit before it and another symbol.
 */
function uniqueEvents(
  env: MerchantEnv,
  sequence: CallbackSequence,
  blockSize: number,
): Array<Record<string, ExactJson>> {
  const sent: Array<Record<string, ExactJson>> = [];
  let lastDeposit: { payload: Record<string, ExactJson>; suffix: string } | undefined;
  for (const event of sequence.events) {
    const isDeposit = String(event.payload.type) === '1';
    if (isDeposit && event.twin && lastDeposit) {
      const txField = 'txid' in lastDeposit.payload ? 'txid' : 'txId';
      // Each twin its own token (W1, W2, ...): two twins of one deposit with one symbol would be one event (CB-ID-DEPOSIT).
      const twin = uniqueEvent(env, {
        ...event.payload,
        symbol: `${String(lastDeposit.payload.symbol)}W${env.events}`,
      });
      const withTxid: Record<string, ExactJson> = Object.fromEntries(
        Object.entries(twin.payload).filter(([name]) => name !== 'txid' && name !== 'txId'),
      );
      withTxid[txField] = lastDeposit.payload[txField]!;
      // Same chain and address as the deposit: only the token differs (a wrapped contract).
      for (const field of ['chain', 'chainName', 'toAddress'])
        if (field in lastDeposit.payload) withTxid[field] = lastDeposit.payload[field]!;
      sent.push(withTxid);
      continue;
    }
    const made = uniqueEvent(env, event.payload);
    if (isDeposit) lastDeposit = made;
    sent.push(event.length ? padToEdge(made.payload, event.length, blockSize) : made.payload);
  }
  return sent;
}

/** Every event once, in order, with the redeliveries interleaved at their moments. */
function scheduleOf(sent: unknown[], sequence: CallbackSequence): ScheduledDelivery[] {
  return [
    ...sent.map((_, event) => ({ event, copies: 1, at: event * 3 })),
    ...sequence.redeliveries.map((redelivery) => ({
      event: redelivery.event % sent.length,
      copies: redelivery.copies,
      at: redelivery.at,
    })),
  ].sort((one, other) => one.at - other.at);
}

const refusedNow = (exchange: Exchange) => acknowledgementOf(exchange).verdict === 'not-acknowledged';

/** What the deliveries of a schedule showed: every exchange, and the first ambiguous answer's warning. */
interface Delivered {
  exchanges: Exchange[];
  warning?: Warning;
}

/** Delivers the schedule; a failed verdict as soon as an event is not acknowledged. */
async function deliverSchedule(
  env: MerchantEnv,
  sent: Array<Record<string, ExactJson>>,
  schedule: ScheduledDelivery[],
): Promise<Delivered | Verdict> {
  const exchanges: Exchange[] = [];
  // U-CB-RESPONSE: an answer some readings count and some do not (errCode 0.0, errCode 0 with HTTP 202) warns.
  let warning: Warning | undefined;
  for (const delivery of schedule) {
    const payload = sent[delivery.event]!;
    const copies = await Promise.all(Array.from({ length: delivery.copies }, () => deliverEvent(env, payload)));
    exchanges.push(...copies);
    // A copy refused while its twin is in flight is retried, as the service retries any failure (CB-ERRCODE); it must then be acknowledged.
    if (delivery.copies > 1) {
      for (const index of copies.keys()) {
        for (let retry = 0; retry < 3 && refusedNow(copies[index]!); retry++) {
          copies[index] = await deliverEvent(env, payload);
          exchanges.push(copies[index]!);
        }
      }
    }
    const refused = copies.find(refusedNow);
    if (refused) {
      await probeSince(env);
      // Not CB-DECRYPT: the answer does not say whether the body was opened (a receiver refusing a
      // field it read has decrypted it). An event not acknowledged is one the service counts as
      // not delivered (CB-ERRCODE) and that was not processed once (CB-ONCE).
      return {
        ok: false,
        message: `a valid type ${String(payload.type)} callback was not acknowledged: ${refused.response ? `HTTP ${refused.response.status} ${refused.response.body.slice(0, 200)}` : refused.error} (${acknowledgementOf(refused).reason})`,
        rules: ['CB-ERRCODE', 'CB-ONCE'],
        evidence: { exchanges: [refused], sent: sent.map((event) => stringifyExact(event)) },
      };
    }
    const ambiguous = copies.find((exchange) => acknowledgementOf(exchange).verdict === 'ambiguous');
    if (ambiguous && !warning) {
      warning = {
        message: `a valid type ${String(payload.type)} callback was answered ${acknowledgementOf(ambiguous).reason}: a service may not count it as acknowledged`,
        rules: ['U-CB-RESPONSE'],
        evidence: { exchanges: [ambiguous] },
      };
    }
  }
  return { exchanges, ...(warning ? { warning } : {}) };
}

/** What the probe shows against what was sent: each event processed once, with the exact payload; a failed verdict, or undefined. */
function judgeProcessing(
  sent: Array<Record<string, ExactJson>>,
  schedule: ScheduledDelivery[],
  exchanges: Exchange[],
  added: string[],
): Verdict | undefined {
  const delivered = new Set(
    exchanges.map((exchange) => stringifyExact(parseExactJson(exchange.payloadText ?? 'null'))),
  );
  const sentTexts = () => sent.map((event) => stringifyExact(event));
  for (const [index, payload] of sent.entries()) {
    const trackingId = payload.trackingId;
    const entries = added.filter((entry) => {
      const value = parseExactJson(entry) as Record<string, ExactJson>;
      return value && value.trackingId === trackingId && String(value.type) === String(payload.type);
    });
    if (entries.length !== 1) {
      const copies = schedule
        .filter((delivery) => delivery.event === index)
        .reduce((n, delivery) => n + delivery.copies, 0);
      return {
        ok: false,
        message: `a type ${String(payload.type)} event delivered ${copies} time(s) was processed ${entries.length} time(s), not once`,
        rules: ['CB-ONCE', 'CB-DUP-ACK', keyRule(payload)],
        evidence: { event: stringifyExact(payload), processed: entries, schedule, sent: sentTexts() },
      };
    }
    if (!delivered.has(entries[0]!)) {
      return {
        ok: false,
        message: `the probe shows ${entries[0]!.slice(0, 300)}, not the exact payload delivered`,
        rules: ['CB-RAW-BODY'],
        evidence: { event: stringifyExact(payload), processed: entries },
      };
    }
  }
  if (added.length !== sent.length) {
    return {
      ok: false,
      message: `${sent.length} distinct events were delivered, the probe shows ${added.length} new processings`,
      rules: ['CB-ONCE'],
      evidence: { processed: added, sent: sentTexts() },
    };
  }
  return undefined;
}

/** Delivers one generated sequence and judges the answers and, with a probe, the processing. */
async function runSequence(env: MerchantEnv, blockSize: number, sequence: CallbackSequence): Promise<Verdict> {
  const sent = uniqueEvents(env, sequence, blockSize);
  const schedule = scheduleOf(sent, sequence);
  const probe = env.probeSeen === undefined ? await probeSince(env) : [];
  const delivered = await deliverSchedule(env, sent, schedule);
  if ('ok' in delivered) return delivered;
  const { exchanges, warning } = delivered;
  const added = probe ? await probeSince(env) : undefined;
  const held = (tag: string): Verdict =>
    warning ? { ok: true, tag: `${tag}, an ambiguous answer (U-CB-RESPONSE)`, warning } : { ok: true, tag };
  if (!added) return held('acknowledged (needs --probe-url or --probe-cmd to check processing)');
  return judgeProcessing(sent, schedule, exchanges, added) ?? held('processed once');
}

/**
 * The minimal failing sequence under the other readings U-CB-FIELDS leaves open: a merchant that
 * fails only with txId/chainName (the provider's spelling), only with amounts spelt one way (a JSON
 * number or a decimal string), or only where a payload's two spellings of a field disagree, gets a
 * warning.
 */
async function explainFailure(
  run: (sequence: CallbackSequence) => Promise<Verdict>,
  sequence: CallbackSequence,
  verdict: Extract<Verdict, { ok: false }>,
) {
  const shown = stringifyExact(sequence as unknown as ExactJson);
  const interfaceSpelt = interfaceSpelling(sequence);
  const readings: Array<[string, CallbackSequence]> = [
    ["the provider's spelling txId/chainName", interfaceSpelt],
    ['amounts as JSON numbers', amountsAs(interfaceSpelt, 'number')],
    ['amounts as decimal strings', amountsAs(interfaceSpelt, 'string')],
    ['txid/txId and chain/chainName agree where a payload carries both', agreeingSpellings(sequence)],
  ];
  for (const [what, other] of readings) {
    if (stringifyExact(other as unknown as ExactJson) === shown) continue;
    const again = await run(other);
    if (again.ok && !again.warning)
      return {
        ...verdict,
        message: `${what === "the provider's spelling txId/chainName" ? `with ${what} only` : `fails unless ${what}`}: ${verdict.message}`,
        rules: ['U-CB-FIELDS'],
      };
  }
  return verdict;
}

/**
 * Merchant property: random valid callbacks of every type (all fields generated, both field
 * spellings, wrapped-contract twins), each delivered once and redelivered at random moments, some
 * copies at the same instant, are all acknowledged with errCode 0 and processed exactly once with
 * the exact payload (with a probe).
 */
export function callbacksOnce(env: MerchantEnv): Property<CallbackSequence> {
  const blockSize = plaintextBlockSize(env.target.profile, env.target.privateKey.modulusBytes);
  const run = (sequence: CallbackSequence) => runSequence(env, blockSize, sequence);
  return {
    id: 'callbacks-once',
    title:
      'Random valid callbacks, redelivered at random moments, are acknowledged and processed exactly once with the exact payload',
    rules: [
      'CB-ERRCODE',
      'CB-ONCE',
      'CB-DUP-ACK',
      'CB-ID-DEPOSIT',
      'CB-ID-WITHDRAW',
      'CB-ID-OTHER',
      'CB-UUID',
      'CB-RAW-BODY',
    ],
    arbitrary: sequenceArbitrary(),
    examples: callbackEdgeExamples(),
    judge: run,
    // Named once on the minimal case (shrinking needs only "fails"): up to three more runs per failing candidate otherwise.
    explain: (sequence, verdict) => explainFailure(run, sequence, verdict),
  };
}
