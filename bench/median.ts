/** The median of some figures (the mean of the middle two when their count is even): how a bench reads rounds. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * The median round by `ratio` (with an even count, the upper of the middle two): the round itself,
 * so a bench can print that round's own rates beside its ratio.
 */
export function medianRound<T>(rounds: readonly T[], ratio: (round: T) => number): T {
  return [...rounds].sort((a, b) => ratio(a) - ratio(b))[Math.floor(rounds.length / 2)]!;
}
