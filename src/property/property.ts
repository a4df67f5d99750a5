import type { Arbitrary } from 'fast-check';

/** What one generated case showed: held, or broke the named rules (with the decrypted evidence). */
export type Verdict =
  | {
      ok: true;
      /** A short tag counted in the result's message (`accepted`, `refused 40016`). */ tag?: string;
      /**
       * The case held under another legal reading of an open point than the property's own (a U-*
       * rule): reported as a warning, while generation goes on looking for failures (a failure under
       * `--strict`, as any U-* verdict).
       */
      warning?: Warning;
    }
  | { ok: false; message: string; rules: string[]; evidence: Record<string, unknown> };

/** What a warning verdict reports: the open point's rule, the message, the decrypted evidence. */
export interface Warning {
  message: string;
  rules: string[];
  evidence: Record<string, unknown>;
}

/**
 * A property of the interface checked over generated cases: an arbitrary of plain (JSON-safe)
 * values, and a judge that sends one case and reads the answer. A judge never throws because the
 * target is wrong: it returns a verdict.
 */
export interface Property<T> {
  /** Stable id: the case of the result (`valid-requests`). */
  id: string;
  title: string;
  /** Every rule the property checks. */
  rules: string[];
  arbitrary: Arbitrary<T>;
  /**
   * Edge cases run first on every run, whatever the seed (after the stored failing examples; they
   * count among the N cases): what a random draw would reach too rarely to rely on.
   */
  examples?: T[];
  judge(value: T): Promise<Verdict>;
  /**
   * Runs once, on the minimal failing case after shrinking: may name the failure anew (what another
   * legal reading of an open point makes of it). Shrinking needs only "fails or holds", so work
   * that only names a failure (more sends under other readings) belongs here, not in `judge`,
   * where it would run again on every failing candidate the shrinker tries.
   */
  explain?(value: T, verdict: Extract<Verdict, { ok: false }>): Promise<Extract<Verdict, { ok: false }>>;
  /** Why the property cannot run against this target (a missing flag), or undefined. */
  skip?: string;
  /** The generated case as it would be stored and shown (exact JSON text of plain data). */
  show?(value: T): unknown;
  /** Runs once after the last case (and shrink): puts back what the property changed; notes for the evidence. */
  finish?(): Promise<string[]>;
}
