import { afterEach, describe, expect, it } from 'vitest';
import { readAcknowledgement } from '../wire/acknowledgement.js';
import { ANSWERS, startReceiver, type Answer, type Receiver } from './receiver.js';

describe("the receiver's scripted answers (CB-ERRCODE, read by src/wire/acknowledgement.ts)", () => {
  it.each(Object.keys(ANSWERS) as Answer[])(
    '%s reads as the service must read it: only ack is an acknowledgement',
    (answer) => {
      expect(readAcknowledgement(ANSWERS[answer]).verdict).toBe(answer === 'ack' ? 'acknowledged' : 'not-acknowledged');
    },
  );

  let receiver: Receiver | undefined;
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });

  it('answers the deliveries in the scripted order, the last one repeating, and records what it answered', async () => {
    receiver = await startReceiver();
    receiver.script(['no-errcode', 'code-zero', 'text-body']);
    const sent: Array<{ status: number; body: string }> = [];
    for (let i = 0; i < 4; i++) {
      const res = await fetch(receiver.url, { method: 'POST', body: `delivery ${i}` });
      sent.push({ status: res.status, body: await res.text() });
    }
    expect(sent).toEqual([ANSWERS['no-errcode'], ANSWERS['code-zero'], ANSWERS['text-body'], ANSWERS['text-body']]);
    expect(receiver.received.map((callback) => [callback.body.toString(), callback.answeredBody])).toEqual([
      ['delivery 0', '{"message":"ok"}'],
      ['delivery 1', '{"code":0}'],
      ['delivery 2', 'success'],
      ['delivery 3', 'success'],
    ]);
  });
});
