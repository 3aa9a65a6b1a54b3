import type { SpawnOptions, SpawnOutcome } from './spawner.ts';

export function runChild(
  file: string,
  args: string[],
  options: SpawnOptions,
  input: string,
): Promise<SpawnOutcome>;
