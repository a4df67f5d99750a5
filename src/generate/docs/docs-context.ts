import type { Rule } from '../../core/rules.js';
import { CALLBACK_TYPE_TABLE, type CallbackTypeTable } from '../../spec/callback-types.js';
import type { SpecSource } from '../../spec/document.js';
import { specModel, type SpecModel } from '../../spec/model.js';
import { demoKeyOf, type ExampleSink } from './examples.js';
import type { DocsOptions, DocsSuite } from './options.js';
import { indexRules, type RuleIndex } from './rule-index.js';
import { callbackTypesOf, endpointsOf, type CallbackType, type Endpoint } from './site-map.js';
import { unspecifiedPointsOf, type UnspecifiedPoint } from './unspecified.js';

export type { ExampleRecord } from './examples.js';

/** Every default resolved once: the one object each page builder reads. */
export interface DocsContext extends RuleIndex, ExampleSink {
  source: SpecSource;
  /** The spec model: every page reads the spec through it (flattened schemas, typed operations). */
  model: SpecModel;
  endpoints: Endpoint[];
  callbacks: CallbackType[];
  /** The callback type table the callbacks are named from. */
  callbackTable: CallbackTypeTable;
  /** Every x-unspecified of the spec, located. */
  unspecified: UnspecifiedPoint[];
  options: DocsOptions;
}

/** Builds the context: the rule index, the pages of the interface, the demo key. */
export function createContext(
  source: SpecSource,
  rules: Rule[],
  suites: readonly DocsSuite[],
  options: DocsOptions,
): DocsContext {
  const model = specModel(source);
  const callbackTable = options.callbackTypes ?? CALLBACK_TYPE_TABLE;
  return {
    source,
    model,
    ...indexRules(rules, options.checks, suites),
    endpoints: endpointsOf(model),
    callbacks: callbackTypesOf(model, callbackTable),
    callbackTable,
    unspecified: unspecifiedPointsOf(model),
    demo: demoKeyOf(options.demo),
    options,
    examples: [],
  };
}
