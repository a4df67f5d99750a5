/** The service side's derived cases (spec/dimensions.yaml). */
import type { Generators } from './common.js';

export const SERVICE_GENERATORS: Generators = {};
