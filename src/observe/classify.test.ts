import { describe, expect, it } from 'vitest';
import { classify } from './classify.js';

describe('classify', () => {
  it.each([
    ['merchant→service', 'POST', '/api/v1/api/order/getEnergyMaxCount', 'energy'],
    ['merchant→service', 'POST', '/api/v1/api/order/getEnergyMaxCount?trace=1', 'energy'],
    ['merchant→service', 'POST', '/api/v1/api/order/withdrawWithoutVerify', 'withdraw'],
    ['merchant→service', 'POST', '/gateway/wallet/api/v1/api/order/withdrawWithoutVerify', 'withdraw'],
    ['merchant→service', 'POST', '/card/close', 'card-close'],
    // A wrong method is still the endpoint: the judge says the method is wrong, not "unknown path".
    ['merchant→service', 'GET', '/card/close', 'card-close'],
    ['merchant→service', 'POST', '/card/close/extra', 'other'],
    ['merchant→service', 'POST', '/api/v1/api/order/getEnergyMaxCount/', 'other'],
    ['merchant→service', 'POST', '/api/v1/api/order/getenergymaxcount', 'other'],
    ['merchant→service', 'GET', '/__control/deliveries', 'other'],
    ['merchant→service', 'GET', '/', 'other'],
    ['service→merchant', 'POST', '/callback', 'callback'],
    ['service→merchant', 'POST', '/any/path/the/merchant/chose?x=1', 'callback'],
    ['service→merchant', 'PUT', '/callback', 'callback'],
    // A callback path on the order side is not a callback: direction decides.
    ['merchant→service', 'POST', '/callback', 'other'],
    ['service→merchant', 'GET', '/callback', 'other'],
    ['service→merchant', 'HEAD', '/health', 'other'],
    ['service→merchant', 'options', '/callback', 'other'],
  ] as const)('%s %s %s → %s', (direction, method, path, kind) => {
    expect(classify(direction, method, path)).toBe(kind);
  });
});
