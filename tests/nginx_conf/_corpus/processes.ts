/**
 * nginx and the gateway for the corpus harness: the check (`nginx -t`, and
 * the gateway's `--check` in this process) and a running server as a child
 * process, each bounded in time and stopped with SIGTERM (SIGKILL after a
 * grace period). Every nginx gets
 * its own prefix, error log and pid path, so it never touches the system's.
 *
 * @module
 */

import { isAbsolute, join } from "node:path";
import { COMPILE_FLAGS } from "../../../scripts/compile.ts";
import { nginxBinary } from "../../_nginx.ts";
import { runStartup } from "../../_utils.ts";
import { walk } from "./conf_tree.ts";
import type { Station } from "./station.ts";

/** The gateway entry point. */
const MAIN = new URL("../../../src/main.ts", import.meta.url).pathname;

/** A check's outcome. */
export interface Verdict {
  ok: boolean;
  /** The first `[emerg]` (or the last line) of its output. */
  message: string;
  /** All it printed. */
  output: string;
}

/** A running server. */
export interface Running extends AsyncDisposable {
  /** Whether it came up listening on every port in time. */
  ready: boolean;
  /** What it printed so far. */
  output(): string;
}

function nginxArgs(s: Station): string[] {
  const globals = `daemon off; master_process off;${
    s.hasPid ? "" : ` pid ${s.prefix}/logs/nginx.pid;`
  }`;
  // -e: the error log before the file's own is read, and nginx for
  // Windows' default when the file names none (Debian's build says stderr).
  return [
    "-p",
    `${s.prefix}/`,
    "-c",
    s.conf,
    "-e",
    `${s.prefix}/logs/error.log`,
    "-g",
    globals,
  ];
}

function gatewayCommand(args: string[]): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-q", ...COMPILE_FLAGS, MAIN, ...args],
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
    env: { NO_COLOR: "1" },
  });
}

function firstMessage(text: string): string {
  const emerg = text.match(/\[emerg\] (.*)/)?.[1];
  if (emerg) return emerg.trim();
  const lines = text.trim().split("\n").filter((l) => l.trim() !== "");
  return (lines.at(-1) ?? "").trim();
}

async function outputWithin(
  command: Deno.Command,
  timeoutMs: number,
): Promise<{ code: number; text: string }> {
  const child = command.spawn();
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* exited */ }
  }, timeoutMs);
  try {
    const out = await child.output();
    const dec = new TextDecoder();
    return {
      code: out.code,
      text: dec.decode(out.stdout) + dec.decode(out.stderr),
    };
  } finally {
    clearTimeout(timer);
  }
}

/** `nginx -t` on a station. */
export async function nginxCheck(s: Station): Promise<Verdict> {
  const { code, text } = await outputWithin(
    new Deno.Command(await nginxBinary(), {
      args: ["-t", ...nginxArgs(s)],
      stdout: "piped",
      stderr: "piped",
      stdin: "null",
    }),
    10_000,
  );
  return { ok: code === 0, message: firstMessage(text), output: text };
}

/**
 * The gateway's `--check --nginx-conf` on a station: `main()`'s start in
 * this process (`runStartup`), which a `deno run` would only add its start
 * to (about 0.2 s of CPU a file).
 */
export async function gatewayCheck(s: Station): Promise<Verdict> {
  const { code, stdout, stderr } = await runStartup([
    "--check",
    "--nginx-conf",
    s.conf,
  ]);
  const text = stdout + stderr;
  return { ok: code === 0, message: firstMessage(text), output: text };
}

async function listening(port: number): Promise<boolean> {
  try {
    (await Deno.connect({ hostname: "127.0.0.1", port })).close();
    return true;
  } catch {
    return false;
  }
}

async function run(
  child: Deno.ChildProcess,
  ports: number[],
  timeoutMs: number,
): Promise<Running> {
  let text = "";
  const drain = async (stream: ReadableStream<Uint8Array> | null) => {
    if (stream === null) return;
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      text += chunk;
    }
  };
  const drained = Promise.all([
    drain(child.stdout).catch(() => {}),
    drain(child.stderr).catch(() => {}),
  ]);
  let exited = false;
  const status = child.status.finally(() => exited = true);
  const end = Date.now() + timeoutMs;
  let ready = false;
  while (!exited && Date.now() < end) {
    const up = await Promise.all(ports.map(listening));
    if (up.every(Boolean)) {
      ready = true;
      break;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    ready,
    output: () => text,
    async [Symbol.asyncDispose]() {
      try {
        child.kill("SIGTERM");
      } catch { /* exited already */ }
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* exited */ }
      }, 5000);
      await status;
      clearTimeout(timer);
      await drained;
    },
  };
}

/** Starts nginx on a station and waits for every listen port. */
export async function startNginx(
  s: Station,
  ports: number[],
): Promise<Running> {
  const child = new Deno.Command(await nginxBinary(), {
    args: nginxArgs(s),
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  }).spawn();
  return run(child, ports, 5000);
}

/**
 * Starts the gateway on a station and waits for every listen port, and for
 * its `started` line where an error log takes `notice`: the line is written
 * once the ports listen, and on a loaded machine it would otherwise land
 * among the probes' lines.
 */
export async function startGateway(
  s: Station,
  ports: number[],
): Promise<Running> {
  const running = await run(
    gatewayCommand(["--nginx-conf", s.conf]).spawn(),
    ports,
    20_000,
  );
  if (running.ready) await startedLine(s);
  return running;
}

/** Waits, bounded, until each error log at `notice` or below holds the start line. */
async function startedLine(s: Station): Promise<void> {
  const logs = [...walk(s.tree)]
    .map(({ directive }) => directive)
    .filter((d) =>
      d.name === "error_log" && /^(notice|info|debug)$/.test(d.args[1] ?? "")
    )
    .map((d) =>
      isAbsolute(d.args[0]!) ? d.args[0]! : join(s.prefix, d.args[0]!)
    );
  const end = Date.now() + 5000;
  for (const path of logs) {
    while (Date.now() < end) {
      let text = "";
      try {
        text = await Deno.readTextFile(path);
      } catch { /* not written yet */ }
      if (/\[notice\] .*station-gateway\/\S+ started/.test(text)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}
