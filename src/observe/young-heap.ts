/**
 * Keeps each exchange's objects in V8's young generation, where they die cheaply.
 *
 * V8 pretenures an allocation site (allocates its objects straight into the old generation) once
 * most of its objects outlive a scavenge. A forwarding proxy's per-request objects do outlive one
 * while their request is in flight, so under load V8 pretenured them. Dead objects in the old
 * generation still count as roots to a scavenge, so each exchange's young objects were kept too,
 * copied, and promoted: 2.5 MB per scavenge at 10,000 requests a second, scavenges of 4 ms instead
 * of 0.4, the whole heap churned through marking (decision 0123). A plain node:http proxy does not
 * trip the heuristic. Turning pretenuring off is process-wide and lasts until the process exits:
 * observe's long-lived state (the page's ring, the judge's queue) is promoted the ordinary way,
 * after two scavenges.
 */
import { setFlagsFromString } from 'node:v8';

let kept = false;

/** Turns V8's allocation-site pretenuring off for this process (once; later calls do nothing). */
export function keepExchangesYoung(): void {
  if (kept) return;
  kept = true;
  setFlagsFromString('--no-allocation-site-pretenuring');
}
