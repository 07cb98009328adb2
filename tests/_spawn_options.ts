/**
 * Spawns the gateway through `tests/_main_with_options.ts`, so a test can set
 * {@linkcode MainOptions} that have no flag, optionally under a wrapper such
 * as `prlimit`.
 *
 * @module
 */
import type { MainOptions } from "../src/main.ts";
import {
  GATEWAY_FLAGS,
  type GatewayProcess,
  spawnListening,
  TEST_BASE_DIR,
} from "./_utils.ts";

const FIXTURE = new URL("./_main_with_options.ts", import.meta.url).pathname;

/** Spawns the gateway with `options` and waits until it listens. */
export async function spawnGatewayWith(
  options: MainOptions,
  args: string[],
  wrapper: string[] = [],
): Promise<GatewayProcess> {
  const command = [
    ...wrapper,
    Deno.execPath(),
    "run",
    "-q",
    ...GATEWAY_FLAGS,
    FIXTURE,
    JSON.stringify({ baseDir: TEST_BASE_DIR, ...options }),
    ...args,
  ];
  return await spawnListening(command);
}
