/**
 * nginx and the gateway for the corpus harness: `nginx -t` and a running
 * nginx as child processes, each bounded in time and stopped with SIGTERM
 * (SIGKILL after a grace period); the gateway's `--check` and its start
 * from the station's nginx.conf in this process, as `main()` runs them.
 * Every nginx gets its own prefix, error log and pid path, so it never
 * touches the system's.
 *
 * @module
 */

import { isAbsolute, join } from "node:path";
import { nginxBinary } from "../../_nginx.ts";
import { runStartup, startMain } from "../../_in_process.ts";
import type { Station } from "./station.ts";

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
  // nginx refuses a main-level directive given twice, from `-g` or the file
  // ("is duplicate", ngx_conf_handler): a file's own `daemon`,
  // `master_process` or `pid` stands.
  const globals = [
    s.hasDaemon ? "" : "daemon off;",
    s.hasMasterProcess ? "" : "master_process off;",
    s.hasPid ? "" : `pid ${s.prefix}/logs/nginx.pid;`,
  ].filter((g) => g !== "").join(" ");
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

/**
 * The pid file a station's nginx writes: the file's own `pid` (relative to
 * the prefix, ngx_conf_full_name) or the one `nginxArgs` gives.
 */
function pidFile(s: Station): string {
  const own = s.tree.find((d) => d.name === "pid")?.args[0];
  if (own === undefined) return `${s.prefix}/logs/nginx.pid`;
  return isAbsolute(own) ? own : join(s.prefix, own);
}

/** Whether a file exists now. */
function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

async function run(
  child: Deno.ChildProcess,
  bounds: { ports: number[]; timeoutMs: number; pidFile: string },
): Promise<Running> {
  const { ports, timeoutMs } = bounds;
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
    // A port that answers may be another process's: an nginx that could not
    // bind it answers nothing, and only its pid file, written once every
    // listening socket is open (ngx_create_pidfile() after ngx_init_cycle()),
    // says the ports are its own. Probes sent to the other process went on
    // to that process's upstreams, among another test's records.
    const up = await Promise.all(ports.map(listening));
    if (up.every(Boolean) && exists(bounds.pidFile)) {
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

/**
 * Starts nginx on a station and waits for every listen port to answer and
 * for its pid file, which says the ports are its own.
 */
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
  return run(child, { ports, timeoutMs: 5000, pidFile: pidFile(s) });
}

/**
 * Starts the gateway on a station from its nginx.conf in this process, as
 * `main()` starts it (`startMain`): every listen port is bound when it
 * returns. No `started` line is written (that is the process's), so none
 * can land among the probes' lines.
 */
export async function startGateway(s: Station): Promise<Running> {
  try {
    const gateway = await startMain(["--nginx-conf", s.conf]);
    return {
      ready: true,
      output: gateway.output,
      [Symbol.asyncDispose]: () => gateway[Symbol.asyncDispose](),
    };
  } catch (error) {
    // A port taken says so in its cause, as a process's [emerg] line did.
    const text = error instanceof Error
      ? `${error.stack}\n${
        error.cause instanceof Error ? error.cause.message : ""
      }`
      : String(error);
    return {
      ready: false,
      output: () => text,
      [Symbol.asyncDispose]: () => Promise.resolve(),
    };
  }
}
