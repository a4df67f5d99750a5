// The proxy's defaults, apart from it so that the CLI's help can name them without loading it.
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RECORDED_BODY_BYTES = 1024 * 1024;
/** The share of one core the judge's thread may spend judging (--judge-cpu), in percent. */
export const DEFAULT_JUDGE_CPU_PERCENT = 25;
