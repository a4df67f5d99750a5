import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { isSafeNumber, LosslessNumber, parse } from 'lossless-json';
import { toValidationView } from '../core/exact-json.js';
import { ConfigError } from '../core/errors.js';
import { PACKAGE_ROOT } from '../platform/package-paths.js';
import type { ShardReport } from '../reporters/merge.js';
import type { Report } from '../runner/types.js';
import { readUserFile } from './io.js';

/** The package's own report schema (schemas/report.schema.json). */
const REPORT_SCHEMA_PATH = join(PACKAGE_ROOT, 'schemas', 'report.schema.json');

let validator: ValidateFunction | undefined;

/** Reads DIR/report.json with exact numbers; a missing or invalid report is a ConfigError naming it. */
export function readReportDir(dir: string): ShardReport {
  const path = join(dir, 'report.json');
  const text = readUserFile(path, 'report').toString('utf8');
  let parsed: unknown;
  try {
    // Counts and times become numbers; only a number a float would change stays its literal digits.
    parsed = parse(text, null, (digits) => (isSafeNumber(digits) ? Number(digits) : new LosslessNumber(digits)));
  } catch (error) {
    throw new ConfigError('bad-report', `${path} is not JSON: ${(error as Error).message}`);
  }
  validator ??= new Ajv2020({ strict: false, allErrors: false }).compile(
    JSON.parse(readUserFile(REPORT_SCHEMA_PATH, 'report schema').toString('utf8')) as object,
  );
  if (!validator(toValidationView(parsed))) {
    const first = validator.errors?.[0];
    throw new ConfigError(
      'bad-report',
      `${path} is not a wallet-conformance report.json: ${first?.instancePath || '(root)'} ${first?.message ?? 'is invalid'}`,
    );
  }
  const report = parsed as Report & { baseline?: unknown };
  // A shard's own baseline verdict does not carry over: `report merge --baseline` judges the whole.
  delete report.baseline;
  return { source: path, report };
}
