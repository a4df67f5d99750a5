import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseExactJson } from '../src/core/exact-json.js';
import { PACKAGE_ROOT, RULES_PATH, SPEC_PATH } from '../src/platform/package-paths.js';
import { parseRuleCatalog } from '../src/core/rules.js';
import { isSchemaName, validateSchema, type SchemaName } from '../src/core/schemas.js';
import { generateAll } from '../src/generate/all.js';
import { componentSchemas, parseSpec } from '../src/spec/document.js';
import { lintOpenApi, lintToolkitRules } from '../src/generate/spec-lint.js';
import { ROOT, runCli } from './support/cli.js';

const specText = readFileSync(SPEC_PATH, 'utf8');
const spec = parseSpec(specText, 'spec/wallet-api.yaml');
const rules = parseRuleCatalog(readFileSync(RULES_PATH, 'utf8'));
const rulesMd = resolve(ROOT, '..', 'shared', 'rules.md');

/** The rule ids the value breaks, validated as exact JSON text (numbers keep their digits). */
const broken = (name: SchemaName, json: string) =>
  validateSchema(name, parseExactJson(json)).flatMap((issue) => issue.rules);
const accepted = (name: SchemaName, json: string) => validateSchema(name, parseExactJson(json));

const order = (fields: Record<string, string>) => {
  const base: Record<string, string> = {
    userId: '10086',
    tenantUserId: '"u-1"',
    tenantType: '1',
    callBackId: '"cb-1"',
    symbol: '"USDT"',
    chainName: '"TRON"',
    toAddr: '"TQn9"',
    amount: '1.5',
    ...fields,
  };
  return `{${Object.entries(base)
    .filter(([, v]) => v !== 'DROP')
    .map(([k, v]) => `"${k}":${v}`)
    .join(',')}}`;
};

describe('spec/wallet-api.yaml', () => {
  it('is valid OpenAPI 3.1 for Redocly, with zero errors and zero warnings', async () => {
    expect(await lintOpenApi(spec)).toEqual([]);
  });

  it('passes the toolkit rules: encrypted fields link plain schemas, rule ids exist, MUST/SHOULD rules cited, examples validate', () => {
    expect(lintToolkitRules(spec, rules)).toEqual([]);
  });

  it('describes the three endpoints, the callback webhook and the control API', () => {
    expect(Object.keys(spec.document.paths ?? {})).toEqual(
      expect.arrayContaining([
        '/api/v1/api/order/getEnergyMaxCount',
        '/api/v1/api/order/withdrawWithoutVerify',
        '/card/close',
        '/__control/merchants/{userId}/callbacks',
        '/__control/deliveries',
      ]),
    );
    expect(Object.keys(spec.document.webhooks ?? {})).toEqual(['walletCallback']);
    expect(spec.document.servers?.[0]?.url).toBe('{base_url}');
    expect(JSON.stringify(spec.document.paths?.['/card/close'])).toContain('{card_base_url}');
  });

  it('gives every component schema at least one example, and each validates with the generated validators', () => {
    for (const [name, schema] of componentSchemas(spec)) {
      expect(isSchemaName(name), name).toBe(true);
      const examples = schema.examples as unknown[];
      expect(examples?.length, name).toBeGreaterThan(0);
      for (const example of examples) expect(validateSchema(name as SchemaName, example), name).toEqual([]);
    }
  });

  it('shows Base64 examples holding "+", "/" and "=", as real ciphertexts do', () => {
    for (const name of ['Base64Ciphertext', 'CallbackBody'] as const) {
      const [example] = componentSchemas(spec).find(([n]) => n === name)![1].examples as string[];
      expect(example).toMatch(/\+/);
      expect(example).toMatch(/\//);
      expect(example).toMatch(/=$/);
    }
  });
});

describe('generated validators judge payloads by the rules', () => {
  it('accept a withdrawal whose amount a float would round, digit for digit', () => {
    expect(accepted('OrderRequest', order({ amount: '12345678901234567890.123' }))).toEqual([]);
    expect(accepted('OrderRequest', order({ amount: '"0.1"' }))).toEqual([]);
  });

  it('refuse each rule break with the rule id of the spec', () => {
    expect(broken('OrderRequest', order({ tenantType: '2' }))).toContain('ORDER-TENANT-TYPE');
    expect(broken('OrderRequest', order({ userId: '"10086"' }))).toContain('ORDER-FIELDS');
    expect(broken('OrderRequest', order({ callBackId: 'DROP' }))).toContain('ORDER-CALLBACK-ID');
    expect(broken('OrderRequest', order({ amount: '"lots"' }))).toContain('ORDER-FIELDS');
    expect(broken('OrderRequest', order({ symbol: '"ENERGY"', amount: '20' }))).toContain('ORDER-EXPIRY');
    expect(broken('OrderRequest', order({ symbol: '"ENERGY"', amount: '1.5', expiryHours: '24' }))).toContain(
      'ORDER-ENERGY-AMOUNT',
    );
    expect(
      broken('OrderRequest', order({ symbol: '"ENERGY"', amount: '12345678901234567890.5', expiryHours: '24' })),
    ).toContain('ORDER-ENERGY-AMOUNT');
    expect(accepted('OrderRequest', order({ symbol: '"ENERGY"', amount: '20', expiryHours: '24' }))).toEqual([]);
    expect(accepted('OrderRequest', order({ expiryHours: '24' }))).toEqual([]);
    expect(broken('OrderResult', '{"tenantUserId":"20931","id":"cb-1"}')).toContain('ORDER-RES');
    expect(broken('EnergyMaxCountResult', '{"chainName":"TRON","symbol":"ENERGY","energyMaxCount":1.5}')).toContain(
      'ENERGY-RES',
    );
    expect(broken('EnergyMaxCountRequest', '{"symbol":"ENERGY"}')).toContain('ENERGY-REQ');
    expect(broken('Envelope', '{"code":"0","message":"","data":"QUJD"}')).toContain('ENV-CODE');
    expect(broken('Envelope', '{"code":0,"message":""}')).toContain('ENV-DATA');
    expect(broken('Envelope', '{"code":0,"message":"","data":"a-b_c"}')).toContain('ENV-DATA');
    expect(accepted('Envelope', '{"code":7,"message":"no","data":null}')).toEqual([]);
    expect(broken('OrderForm', '{"data":"QUJD\\nREVG"}')).toContain('ORDER-DATA');
    expect(broken('UnauthorizedError', '{"code":"unauthorized","message":"unauthorized"}')).toContain('ERR-401');
    expect(broken('NotFoundError', '{"code":"NOT_FOUND","message":"not found"}')).toContain('ERR-404');
    expect(
      broken(
        'CardCloseResponse',
        '{"success":false,"errorCode":"","errorMessage":"x","errorMessageEn":"x","detailMessage":"","requestId":"r"}',
      ),
    ).toContain('CARD-ERR');
    expect(
      broken(
        'CardCloseRequest',
        '{"merchantId":1,"merchantUserId":"u","powerCardId":"p","channel":"c","closeSerialNo":"s"}',
      ),
    ).toContain('CARD-REQ');
    expect(
      broken(
        'CallbackPayload',
        '{"type":1,"requestUUID":"u","trackingId":"t","chain":"TRON","symbol":"USDT","toAddress":"T","amount":"1"}',
      ),
    ).toContain('CB-ID-DEPOSIT');
    expect(
      broken(
        'CallbackPayload',
        '{"type":3,"requestUUID":"u","trackingId":"t","callBackId":"c","chain":"TRON","symbol":"USDT","toAddress":"T","amount":"1"}',
      ),
    ).toContain('CB-ID-WITHDRAW');
    expect(broken('CallbackPayload', '{"type":6,"requestUUID":"u","trackingId":"t"}')).toContain('CB-ID-OTHER');
    expect(
      validateSchema('CallbackPayload', parseExactJson('{"type":99,"requestUUID":"u","trackingId":"t"}')).length,
    ).toBeGreaterThan(0);
    expect(broken('CallbackAnswer', '{"errCode":"0"}')).toContain('CB-ERRCODE');
  });
});

describe('spec/rules.yaml', () => {
  it.runIf(existsSync(rulesMd))('holds exactly the rules of ../shared/rules.md, with the same severities', () => {
    const md = readFileSync(rulesMd, 'utf8');
    const fromMd = new Map<string, string>();
    for (const line of md.split('\n')) {
      for (const match of line.matchAll(/(?:^- |; )([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+)( \(S\))?:/g)) {
        fromMd.set(match[1]!, match[1]!.startsWith('U-') ? 'UNSPECIFIED' : match[2] ? 'SHOULD' : 'MUST');
      }
    }
    expect(fromMd.size).toBeGreaterThan(50);
    expect(new Map(rules.map((rule) => [rule.id, rule.severity]))).toEqual(fromMd);
  });

  it('gives a reason for every rule that no check can observe from outside', () => {
    for (const rule of rules.filter((r) => !r.blackBox)) expect(rule.reason, rule.id).toBeTruthy();
  });
});

describe('src/generated', () => {
  it('is fresh: regenerating from the committed spec gives the committed files byte for byte', async () => {
    for (const file of await generateAll(spec)) {
      const committed = readFileSync(join(PACKAGE_ROOT, file.path), 'utf8');
      expect(committed === file.contents, `${file.path} is stale: run npm run generate`).toBe(true);
    }
  });
});

describe('src/generated under plain Node (the built package, no bundler interop)', () => {
  it('loads and runs the CommonJS runtime helpers ajv needs (ucs2length, formats)', () => {
    const script = `const m = await import(${JSON.stringify(join(ROOT, 'dist/core/schemas.js'))});
      const issues = m.validateSchema('OrderRequest', {userId:1,tenantUserId:'u',tenantType:1,callBackId:'',symbol:'USDT',chainName:'TRON',toAddr:'T',amount:1});
      const url = m.validateSchema('ControlCallbackUrl', {url:'http://127.0.0.1:1/x'});
      process.stdout.write(JSON.stringify([issues.map((i) => i.keyword), url.length]));`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual([['minLength'], 0]);
  });
});

describe('spec lint and generate --check (CLI)', () => {
  it('spec lint passes the committed spec with exit 0', () => {
    const run = runCli(['spec', 'lint']);
    expect(run.stdout).toContain('spec lint: 0 error(s), 0 warning(s)');
    expect(run.status).toBe(0);
  });

  it('spec lint fails with exit 1 when the spec cites a rule id that does not exist', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wc-spec-'));
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, specText.replace('x-rules: [ORDER-TENANT-TYPE]', 'x-rules: [ORDER-TENANT-KIND]'));
    const run = runCli(['spec', 'lint', '--spec', file]);
    expect(run.stdout).toMatch(/x-rules cites ORDER-TENANT-KIND, which is not in the rule catalog/);
    expect(run.stdout).toMatch(/rule ORDER-TENANT-TYPE \(MUST\) is not cited/);
    expect(run.status).toBe(1);
  });

  it('generate --check (the developer entry, src/cli/dev.ts, as `npm run generate` runs it) reports the committed files fresh', () => {
    const run = spawnSync(
      process.execPath,
      [resolve(ROOT, 'node_modules/tsx/dist/cli.mjs'), 'src/cli/dev.ts', 'generate', '--check'],
      {
        cwd: ROOT,
        timeout: 120_000,
      },
    );
    expect(run.stdout.toString()).toMatch(/fresh .*docs\/cli-reference\.md/);
    expect(run.stdout.toString()).not.toMatch(/stale/);
    expect(run.status).toBe(0);
  });
});
