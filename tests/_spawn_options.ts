/**
 * Spawns the gateway through `tests/_main_with_options.ts`, so a test can set
 * {@linkcode MainOptions} that have no flag, optionally under a wrapper such
 * as `prlimit`.
 *
 * @module
 */
import type { MainOptions } from "../src/main.ts";
import { GATEWAY_FLAGS, type GatewayProcess, waitFor } from "./_utils.ts";

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
    JSON.stringify(options),
    ...args,
  ];
  const child = new Deno.Command(command[0]!, {
    args: command.slice(1),
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  let text = "";
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      text += chunk;
    }
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch { /* exited */ }
    await child.status;
    await drained;
  };
  try {
    await waitFor(() => /listening on http:\/\/[^ ]+:\d+\//.test(text), 15_000);
  } catch (error) {
    await stop();
    throw new Error(`gateway did not start: ${text}`, { cause: error });
  }
  return {
    child,
    port: Number(text.match(/listening on http:\/\/[^ ]+:(\d+)\//)![1]),
    output: () => text,
    [Symbol.asyncDispose]: stop,
  };
}
