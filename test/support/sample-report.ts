import { LosslessNumber, parseExactJson } from '../../src/core/exact-json.js';
import type { CheckResult, Report, Status } from '../../src/runner/types.js';

/** An amount no binary float holds: any rounding shows. */
export const EXACT_AMOUNT = '12345678901234567890.123456789';

/** A check result with defaults; `over` replaces any field. */
export function result(id: string, status: Status, over: Partial<CheckResult> = {}): CheckResult {
  const [side = 'service', suite = 'energy', testCase = 'case', check = 'check'] = id.split('/');
  return {
    id,
    suite: `${side}/${suite}`,
    case: testCase,
    title: `${testCase}: ${check}`,
    rules: ['ERR-401'],
    status,
    message: status === 'passed' ? '' : `${check} ${status}`,
    durationMs: 12,
    ...over,
  };
}

/** Evidence of an order submission: the wire request beside its plain JSON, the answer beside its decryption (exact numbers). */
export function orderEvidence(): Record<string, unknown> {
  const plain = `{"userId":10086,"callBackId":"cb-1","symbol":"USDT","chainName":"TRON","toAddr":"T9yD","amount":${EXACT_AMOUNT}}`;
  const decrypted = `{"tenantUserId":"20931","id":"cb-1","amount":${EXACT_AMOUNT}}`;
  return {
    exchanges: [
      {
        request: {
          method: 'POST',
          url: 'http://127.0.0.1:4010/api/v1/api/order/withdrawWithoutVerify',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': 'ak_t…#3f9c' },
          body: 'data=QUJDRA%3D%3D',
          plain,
        },
        response: {
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: '{"code":0,"message":"","data":"WFla"}',
          json: parseExactJson('{"code":0,"message":"","data":"WFla"}'),
          decrypted: { text: decrypted, value: parseExactJson(decrypted) },
        },
      },
    ],
  };
}

/** Evidence of an emit step: the control request, then four deliveries answered errCode 1, HTTP 500, errCode "0", errCode 0. */
export function deliveryEvidence(): Record<string, unknown> {
  const payload = (uuid: string) => `{"type":6,"requestUUID":"${uuid}","trackingId":"nem-1","amount":"99999.5"}`;
  const answers = [
    [200, '{"errCode":1,"message":"not processed"}'],
    [500, '{"errCode":500,"message":"scripted failure"}'],
    [200, '{"errCode":"0","message":""}'],
    [200, '{"errCode":0,"message":""}'],
  ] as const;
  return {
    exchanges: [
      {
        request: {
          method: 'POST',
          url: 'http://127.0.0.1:4010/__control/merchants/10086/callbacks',
          headers: {},
          body: '{"type":6,"fields":{},"deliveries":1,"concurrent":false,"retryDelaysMs":[50,50,50,50]}',
        },
        response: { status: 200, headers: {}, body: '{"trackingId":"nem-1"}' },
      },
      ...answers.map(([status, body], i) => ({
        request: {
          method: 'POST',
          url: '/wallet-conformance/callback',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `Q0FMTEJBQ0s${i}`,
          plain: payload(`uuid-${i + 1}`),
          receivedAt: 1_700_000_000_000 + i * 55,
        },
        response: { status, headers: {}, body },
      })),
    ],
  };
}

/** A report with a failure, a warning, a skip, a rule with six passed and one skipped check, and callback deliveries. */
export function sampleReport(): Report {
  const results: CheckResult[] = [
    ...[1, 2, 3, 4, 5, 6].map((n) => result(`service/energy/key-${n}/status`, 'passed', { rules: ['ERR-401'] })),
    result('service/energy/key-7/status', 'skipped', { rules: ['ERR-401'], message: 'needs --expired-key' }),
    result('service/orders/withdrawal/order-res', 'failed', {
      rules: ['ORDER-RES'],
      message: 'tenantUserId is the string "20931", expected an integer',
      evidence: orderEvidence(),
    }),
    result('service/callbacks/retry-until-ack/callback-attempts', 'passed', {
      rules: ['CB-ERRCODE'],
      message: '4 deliveries',
      evidence: deliveryEvidence(),
    }),
    result('service/card/close/card-values', 'warning', {
      rules: ['U-CARD-VALUES'],
      message: 'status "CLOSED" is not a documented value',
    }),
    result('service/energy/floor/floor', 'skipped', { rules: ['ENERGY-FLOOR'], message: 'needs --control-token' }),
  ];
  const count = (status: Status) => results.filter((r) => r.status === status).length;
  return {
    target: {
      side: 'service',
      baseUrl: 'http://127.0.0.1:4010',
      cardBaseUrl: 'http://127.0.0.1:4010',
      userId: 10086,
      profile: { padding: 'pkcs1', request: 'public' },
      control: true,
      allowOrders: true,
    },
    summary: {
      passed: count('passed'),
      failed: count('failed'),
      warnings: count('warning'),
      skipped: count('skipped'),
      durationMs: 1234,
    },
    results,
  };
}

export { LosslessNumber };
