import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'src/generated/**', 'reports/**', 'test/vectors/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/cli/*'], message: 'Nothing imports cli (design.md: dependencies point one way).' }] }],
    },
  },
  {
    files: ['src/cli/**', 'bin/**', 'test/**', 'bench/**'],
    rules: { 'no-restricted-imports': 'off' },
  },
);
