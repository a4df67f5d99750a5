import { describe, expect, it } from 'vitest';
import { describeIssues, ruleSuffix } from './issue-wording.js';
import type { SchemaIssue } from './schemas.js';

const issue = (path: string, keyword: string, message: string, rules: string[] = []): SchemaIssue => ({
  path,
  keyword,
  message,
  schemaPath: '',
  rules,
});

describe('issue wording', () => {
  it('names rules once each, or nothing', () => {
    expect(ruleSuffix(['A', 'B', 'A'])).toBe(' [A, B]');
    expect(ruleSuffix([])).toBe('');
  });

  it('shows every issue with its rules by default (the runner)', () => {
    const issues = Array.from({ length: 7 }, (_, i) =>
      issue(`/f${i}`, 'type', `/f${i} must be string`, i === 0 ? ['ENV-CODE'] : []),
    );
    expect(describeIssues(issues)).toBe(
      '/f0 must be string [ENV-CODE]; /f1 must be string; /f2 must be string; /f3 must be string; /f4 must be string; /f5 must be string; /f6 must be string',
    );
    expect(describeIssues([])).toBe('');
  });

  it('shows the first ones and counts the rest under a limit (a refusal)', () => {
    const issues = Array.from({ length: 7 }, (_, i) => issue(`/f${i}`, 'type', `/f${i} must be string`));
    expect(describeIssues(issues, { limit: 5 })).toBe(
      '/f0 must be string; /f1 must be string; /f2 must be string; /f3 must be string; /f4 must be string; and 2 more',
    );
    expect(describeIssues(issues.slice(0, 5), { limit: 5 })).toBe(
      '/f0 must be string; /f1 must be string; /f2 must be string; /f3 must be string; /f4 must be string',
    );
  });

  it('shows an issue worded twice twice unless asked once', () => {
    const twice = [issue('/a', 'type', '/a must be string'), issue('/a', 'type', '/a must be string')];
    expect(describeIssues(twice)).toBe('/a must be string; /a must be string');
    expect(describeIssues(twice, { once: true })).toBe('/a must be string');
  });

  it('words issues by field, with the constant a field must hold, and shows a repeated one once (the MSW handlers)', () => {
    const issues = [
      issue('/tenantType', 'const', '/tenantType must be equal to constant', ['ORDER-TENANT-TYPE']),
      issue('/tenantType', 'const', '/tenantType must be equal to constant', ['ORDER-TENANT-TYPE']),
      issue('', 'required', "(root) must have required property 'amount'", ['ORDER-AMOUNT']),
      issue('/order/amount', 'type', '/order/amount must be string'),
      issue('', 'type', '(root) must be object'),
    ];
    expect(describeIssues(issues, { limit: 5, fields: { constants: { tenantType: 1 } }, once: true })).toBe(
      'tenantType must be 1 [ORDER-TENANT-TYPE]; the request is required [ORDER-AMOUNT]; order.amount must be string; the request must be object',
    );
  });
});
