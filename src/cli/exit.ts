/** Exit statuses (README.md, Exit codes): 0 all MUST checks passed, 1 a MUST check failed, 2 could not run. */
export const EXIT = { ok: 0, failed: 1, unusable: 2 } as const;
