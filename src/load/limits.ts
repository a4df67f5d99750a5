/** Bounds of every storm (apart from the storm, so that the CLI's help can name them without loading it). */
export const STORM_LIMITS = {
  events: 100_000,
  duplicates: 5,
  concurrency: 1_000,
  durationS: 3_600,
  maxAttempts: 20,
} as const;
