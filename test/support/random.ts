// Seeded randomness for tests, so a failing case can be reproduced from its seed.

/** A random number in [0, 1), like Math.random. */
export type Rng = () => number;

/** A small deterministic PRNG (mulberry32): the same sequence for the same seed on every run. */
export function seeded(seed: number): Rng {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
