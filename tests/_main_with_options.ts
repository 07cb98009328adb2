/**
 * Runs the gateway as `src/main.ts` does, with {@linkcode MainOptions} given
 * as JSON in the first argument: settings with no flag, for tests that spawn
 * the gateway (a short shutdown grace, say).
 *
 * @module
 */
import { main, type MainOptions } from "../src/main.ts";

const [json, ...args] = Deno.args;
Deno.exit(await main(args, JSON.parse(json ?? "{}") as MainOptions));
