/**
 * Test helpers: real servers on 127.0.0.1 (port 0) only.
 *
 * @module
 */

import { parseUpstreamServer } from "../src/config/addresses.ts";
import { resolveConfig } from "../src/config/config.ts";
import type { GatewayConfig } from "../src/config/gateway_config.ts";
import { createLogger } from "../src/log/logger.ts";
import { startServing } from "../src/server/mod.ts";
import { GatewayStats } from "../src/status.ts";
import type { UpstreamTimeouts } from "../src/upstream/types.ts";

/** What a test upstream saw of one request. */
export interface SeenRequest {
  method: string;
  /** The raw request target, exactly as received. */
  target: string;
  headers: Headers;
  body: Uint8Array;
}

/** A real upstream server on loopback that records what it receives. */
export interface TestUpstream extends AsyncDisposable {
  port: number;
  origin: string;
  seen: SeenRequest[];
}

/**
 * Starts an upstream on 127.0.0.1:0. The handler gets the request with its
 * body already read (recorded in `seen`).
 */
export function startUpstream(
  handler: (req: SeenRequest) => Response | Promise<Response> = () =>
    new Response("ok"),
): TestUpstream {
  const seen: SeenRequest[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      const host = req.headers.get("host") ?? "";
      const target = req.url.slice(`http://${host}`.length);
      const body = new Uint8Array(await req.arrayBuffer());
      const entry = { method: req.method, target, headers: req.headers, body };
      seen.push(entry);
      return await handler(entry);
    },
  );
  const port = server.addr.port;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    seen,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

/**
 * A port on 127.0.0.1 that nothing listens on, for a server the test starts
 * on it later. Drawn at random below Linux's ephemeral range
 * (`ip_local_port_range`, 32768–60999) and checked by binding it: a port the
 * kernel hands out for port 0 and that is closed again goes to the next
 * server anywhere on the machine that asks for port 0 (the suites run in
 * parallel, beside other suites), which then answered where a refusal was
 * expected. Ports for servers and ports left refused come from ranges of
 * their own ({@linkcode refusedPort}). In a sharded run each shard draws
 * from its own share of the range.
 */
export function freePort(): number {
  const shard = (globalThis as {
    stationGatewayShard?: { index: number; count: number };
  }).stationGatewayShard;
  if (shard === undefined) return drawPort(20_000, 30_000);
  // One share of the range per shard of the suite (tests/_shards): shards
  // run at once, and a port one checked and let go could be bound by
  // another before its own server binds it.
  const width = Math.floor(10_000 / shard.count);
  const from = 20_000 + shard.index * width;
  return drawPort(from, from + width);
}

/**
 * The ports this worker handed out last: a test draws several before it
 * binds any (`[plain, tls] = [freePort(), freePort()]`), and the check by
 * binding cannot tell a port just handed out from a free one.
 */
const handedOut: number[] = [];

/** A port in [from, to) that binds on 127.0.0.1 now, not handed out lately. */
function drawPort(from: number, to: number): number {
  for (let i = 0; i < 1000; i++) {
    const port = from + Math.floor(Math.random() * (to - from));
    if (handedOut.includes(port)) continue;
    try {
      Deno.listen({ hostname: "127.0.0.1", port }).close();
      handedOut.push(port);
      if (handedOut.length > 64) handedOut.shift();
      return port;
    } catch {
      // taken: draw again
    }
  }
  throw new Error(`Cannot find a free port on 127.0.0.1 in ${from}-${to - 1}`);
}

/** How many ports {@linkcode onFreePort} draws before it gives up. */
const PORT_ATTEMPTS = 5;

/**
 * Starts something that must be told its port before it binds it (nginx or
 * a gateway process: the port is written into its configuration or its
 * arguments), drawing a new port and starting the whole thing again when
 * the bind found the port taken. {@linkcode freePort}'s check and the later
 * bind are two steps, and suites running beside this one draw from the
 * same range in between. A listener the test opens itself binds port 0
 * instead and reads the port back.
 *
 * @param start Starts on the port; throws (with the bind failure in its
 * message or causes) when it could not listen, after undoing what it made.
 * @returns What `start` returned.
 */
export async function onFreePort<T>(
  start: (port: number) => Promise<T>,
): Promise<T> {
  for (let attempt = 1;; attempt++) {
    const port = freePort();
    try {
      return await start(port);
    } catch (error) {
      if (attempt >= PORT_ATTEMPTS || !portTaken(error)) throw error;
    }
  }
}

/**
 * Whether a failed start says its port was taken (EADDRINUSE: nginx's and
 * the gateway's `bind() to ... failed (98: Address already in use)`, or
 * Deno's own error), in its message or its causes.
 */
export function portTaken(error: unknown): boolean {
  let e = error;
  for (let depth = 0; depth < 8 && e instanceof Error; depth++) {
    if (e instanceof Deno.errors.AddrInUse) return true;
    if (/Address already in use/.test(e.message)) return true;
    e = e.cause;
  }
  return false;
}

/**
 * A port on 127.0.0.1 that refuses connections, and keeps refusing: drawn
 * from 30000–31999, where no server of this suite or one running beside it
 * starts (a port shared by two tests that both want a refusal is harmless;
 * one another test serves on answered 404 where a 502 was expected). A port
 * a test listens on comes from {@linkcode freePort}, or from
 * {@linkcode closingPort} when it must refuse once closed.
 */
export function refusedPort(): number {
  return drawPort(30_000, 32_000);
}

/**
 * A port for a server a test closes mid-test and whose port must refuse from
 * then on: drawn from 32000–32767, apart from {@linkcode refusedPort}'s (a
 * refused port a server listened on answered another test's connect, which
 * expected a refusal) and from the ports bound to 0, which another suite's
 * server can take once this one closes.
 */
export function closingPort(): number {
  return drawPort(32_000, 32_768);
}

/** An in-process gateway on a real socket, with captured log lines. */
export interface TestGateway extends AsyncDisposable {
  port: number;
  url: string;
  errorLines: string[];
  accessLines: string[];
  /**
   * Its counters: `requests` grows when the handler gets a request, the
   * event a test waits on before sending the rest of one.
   */
  stats: GatewayStats;
}

/** The root tests serve from when they give none: no such folder. */
const NO_ROOT = "/nonexistent-station-gateway-root";

/** The defaults, resolved once. */
const DEFAULT_CONFIG = resolveConfig({}, { root: NO_ROOT }, "/");

/**
 * A configuration as `resolveConfig` builds it from no file and no flags,
 * with a missing root, and `overrides` on top.
 */
export function testConfig(
  overrides: Partial<GatewayConfig> = {},
): GatewayConfig {
  return { ...DEFAULT_CONFIG, ...overrides };
}

/**
 * Starts the gateway in process on 127.0.0.1:0 through `startServing()`,
 * the start `main` runs (listeners, upstream group, handler), with its log
 * lines captured.
 */
export async function startGateway(
  options: Partial<Omit<GatewayConfig, "timeouts">> & {
    /** One upstream, or several `server` lines for failover. */
    upstreamUrl: string | string[];
    /** Each 10 s unless given. */
    timeouts?: Partial<UpstreamTimeouts>;
    /** Match `/api/` ignoring case (as on Windows). */
    caseless?: boolean;
    /** The clock upstream failures are timed by (`fail_timeout`). */
    now?: () => number;
  },
): Promise<TestGateway> {
  const errorLines: string[] = [];
  const accessLines: string[] = [];
  const level = options.errorLogLevel ?? "info";
  const logger = createLogger({
    errorLog: { write: (line: string) => errorLines.push(line) },
    accessLog: { write: (line: string) => accessLines.push(line) },
    level,
    // An nginx.conf's format, as main.ts takes it.
    ...(options.engine
      ? { accessFormat: options.engine.accessLog.format }
      : {}),
  });
  const { upstreamUrl, caseless, now, ...overrides } = options;
  const urls = typeof upstreamUrl === "string" ? [upstreamUrl] : upstreamUrl;
  // Bodies past client_body_buffer_size go to a folder of the gateway's own.
  const bodyTemp = overrides.clientBodyTempPath === undefined
    ? await Deno.makeTempDir({ prefix: "gw-body-" })
    : null;
  const config = testConfig({
    ...(bodyTemp === null ? {} : { clientBodyTempPath: bodyTemp }),
    listen: { hostname: "127.0.0.1", port: 0 },
    upstreams: urls.map(parseUpstreamServer),
    upstreamKeepalive: 32,
    errorLogLevel: level,
    ...overrides,
    timeouts: {
      connectMs: 10_000,
      sendMs: 10_000,
      readMs: 10_000,
      ...options.timeouts,
    },
  });
  const stats = new GatewayStats();
  const started = await startServing(config, {
    version: "test",
    logger,
    stats,
    ...(caseless === undefined ? {} : { caseless }),
    ...(now === undefined ? {} : { now }),
  });
  if ("failure" in started) {
    throw new Error(`Cannot bind ${started.failure.address}`, {
      cause: started.failure.error,
    });
  }
  const { serving } = started;
  return {
    port: serving.port,
    url: `http://127.0.0.1:${serving.port}`,
    errorLines,
    accessLines,
    stats,
    async [Symbol.asyncDispose]() {
      await serving.shutdown();
      serving.close();
      if (bodyTemp !== null) {
        await Deno.remove(bodyTemp, { recursive: true }).catch(() => {});
      }
    },
  };
}

/**
 * Where the responses in `bytes` end, read by their framing (RFC 9112 §6.3):
 * the length after the last complete response that carries
 * `Connection: close`, or null while none is complete. A server that sends
 * `close` may send nothing after that response (RFC 9112 §9.6), so the
 * reader need not wait for the socket to close: Deno.serve keeps it open
 * after a handler's `Connection: close` (denoland/deno#9411), nginx closes.
 *
 * @param bytes What was read so far.
 * @param heads Whether each request was a HEAD (its response has no body).
 * @returns The end of the last response, or null.
 *
 * @example Usage
 * ```ts
 * import { closedResponseEnd } from "./_utils.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
 * const bad = "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n" +
 *   "Content-Length: 3\r\n\r\nbad";
 * const text = new TextEncoder().encode(ok + bad);
 * strictEqual(closedResponseEnd(text, [false, false]), text.length);
 * strictEqual(closedResponseEnd(text.subarray(0, -1), [false, false]), null);
 * ```
 */
export function closedResponseEnd(
  bytes: Uint8Array,
  heads: boolean[],
): number | null {
  const read = completeResponses(bytes, heads);
  return read.closed ? read.end : null;
}

/**
 * The complete final responses at the start of `bytes`: how many, where the
 * last ends, and whether it said `Connection: close` (then no more follow).
 *
 * @param bytes What was read so far.
 * @param heads Whether each request was a HEAD (its response has no body).
 * @returns The count, the end of the last one, and whether it closed.
 */
export function completeResponses(
  bytes: Uint8Array,
  heads: boolean[],
): { count: number; end: number; closed: boolean } {
  // One character per byte, so offsets are byte offsets.
  const text = new TextDecoder("latin1").decode(bytes);
  let at = 0;
  let count = 0;
  const done = (closed: boolean) => ({ count, end: at, closed });
  while (at < text.length) {
    const headEnd = text.indexOf("\r\n\r\n", at);
    if (headEnd < 0) return done(false);
    const head = text.slice(at, headEnd).toLowerCase();
    const status = Number(head.match(/^http\/1\.[01] (\d{3})/)?.[1] ?? NaN);
    if (Number.isNaN(status)) return done(false);
    let next = headEnd + 4;
    if (status >= 100 && status < 200) {
      at = next; // an interim response: the final one follows
      continue;
    }
    const field = (name: string) =>
      head.match(new RegExp(`\r\n${name}:[ \t]*([^\r]*)`))?.[1] ?? null;
    if (heads[count] === true || status === 204 || status === 304) {
      // no body
    } else if (/\bchunked\b/.test(field("transfer-encoding") ?? "")) {
      const end = chunkedEnd(text, next);
      if (end === null) return done(false);
      next = end;
    } else if (field("content-length") !== null) {
      next += Number(field("content-length"));
      if (next > text.length) return done(false);
    } else {
      return done(false); // delimited by the close itself
    }
    at = next;
    count++;
    if (/\bclose\b/.test(field("connection") ?? "")) return done(true);
  }
  return done(false);
}

/** The end of a chunked body starting at `at`, or null while incomplete. */
function chunkedEnd(text: string, at: number): number | null {
  for (let i = 0; i < 10_000; i++) {
    const lineEnd = text.indexOf("\r\n", at);
    if (lineEnd < 0) return null;
    const size = parseInt(text.slice(at, lineEnd), 16);
    if (Number.isNaN(size)) return null;
    if (size === 0) {
      const end = text.indexOf("\r\n\r\n", lineEnd);
      return end < 0 ? null : end + 4;
    }
    at = lineEnd + 2 + size + 2;
    if (at > text.length) return null;
  }
  return null;
}

/**
 * Sends raw bytes on a new connection and returns everything read until the
 * server closes, a complete response says `Connection: close`
 * ({@linkcode closedResponseEnd}), every request sent has its complete
 * response (only when no request has a body, where a smuggled request could
 * hide from the count), or `timeoutMs` passes.
 */
export async function rawRequest(
  port: number,
  text: string,
  // Generous: responses end by their framing, so this bound only matters
  // for a server that stays silent, and a loaded machine may take seconds.
  timeoutMs = 10_000,
): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const timer = setTimeout(() => conn.close(), timeoutMs);
  // Any method token (RFC 9110 §9.1: `get`, `M1`, `MY_METH` too), so an
  // answer to one the server refuses still ends by its framing.
  const heads = [
    ...text.matchAll(
      /(?:^|\n)([!#$%&'*+.^_`|~0-9A-Za-z-]+) \S+ HTTP\/1\.[01]\r?\n/g,
    ),
  ].map((m) => m[1] === "HEAD");
  const countable = heads.length > 0 &&
    !/\r\n(content-length|transfer-encoding)\s*:/i.test(text);
  let bytes = new Uint8Array(0);
  try {
    await conn.write(new TextEncoder().encode(text));
    const buf = new Uint8Array(64 * 1024);
    while (true) {
      const n = await conn.read(buf);
      if (n === null) break;
      const more = new Uint8Array(bytes.length + n);
      more.set(bytes);
      more.set(buf.subarray(0, n), bytes.length);
      bytes = more;
      const read = completeResponses(bytes, heads);
      if (read.end !== bytes.length) continue;
      if (read.closed || (countable && read.count >= heads.length)) break;
    }
    conn.close();
  } catch {
    // closed by the timer
  } finally {
    clearTimeout(timer);
  }
  return new TextDecoder().decode(bytes);
}

/**
 * Waits until `check` is true, polling every 10 ms, at most `timeoutMs`
 * (a bound for a condition that never comes, not a time anything should
 * take: it returns as soon as the condition holds).
 */
export async function waitFor(
  check: () => boolean,
  timeoutMs = 10_000,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error("Timed out waiting for condition");
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Replaces nginx's variable parts in an error line: the time, pid#tid and
 * *N, and `limit_req`'s excess rounded up to whole requests (what drained
 * between two requests depends on the milliseconds between them: 0.999 on
 * one side, 0.998 on the other under load).
 */
export function maskErrorLine(line: string): string {
  return line.replace(
    /^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d (\[\w+\]) \d+#\d+: (?:\*\d+ )?/,
    "TIME $1 PID#TID: *N ",
  ).replace(
    /excess: (\d+\.\d{3})/,
    (_, n: string) => `excess: ${Math.ceil(Number(n))}`,
  );
}

/** Replaces the time and body bytes of an access line (`combined`). */
export function maskAccessLine(line: string): string {
  return line.replace(/\[[^\]]+\]/, "[TIME]").replace(
    /" (\d{3}) \d+ "/,
    '" $1 BYTES "',
  );
}

/** The status code of a raw HTTP/1.1 response, past any `100 Continue`. */
export function finalStatus(raw: string): string {
  const finals = raw.split(/(?=HTTP\/1\.1 \d{3} )/).filter((p) =>
    !p.startsWith("HTTP/1.1 100 ")
  );
  return finals[0]?.slice(9, 12) ?? "none";
}

/**
 * The exact flags `deno task start` and `deno task compile` run the gateway
 * with (one list, in scripts/compile.ts): tests that spawn it use these and
 * no more, so a missing permission fails a test rather than a station.
 * (`-q` is added when spawning: on Linux Deno otherwise prints that it
 * cannot find `schtasks` and `icacls` for `--allow-run=schtasks,icacls`; it grants nothing.)
 */
import { COMPILE_FLAGS as GATEWAY_FLAGS } from "../scripts/compile.ts";
export { GATEWAY_FLAGS };

/** The gateway entry point. */
export const MAIN = new URL("../src/main.ts", import.meta.url).pathname;

/** Runs `main()` with `MainOptions` as JSON in its first argument. */
export const MAIN_WITH_OPTIONS =
  new URL("./_main_with_options.ts", import.meta.url).pathname;

/**
 * The folder a spawned test gateway takes for the executable's
 * (`MainOptions.baseDir`): its fallback `logs/error.log` lands here, never
 * in the project's `logs/`. One per test process, removed at its exit.
 */
export const TEST_BASE_DIR: string = Deno.makeTempDirSync({
  prefix: "station-gateway-base-",
});
globalThis.addEventListener("unload", () => {
  try {
    Deno.removeSync(TEST_BASE_DIR, { recursive: true });
  } catch {
    // already gone
  }
});

/** The command that runs the gateway as `deno run` does, in TEST_BASE_DIR. */
function gatewayCommand(args: string[]): string[] {
  return [
    Deno.execPath(),
    "run",
    "-q",
    ...GATEWAY_FLAGS,
    MAIN_WITH_OPTIONS,
    JSON.stringify({ baseDir: TEST_BASE_DIR }),
    ...args,
  ];
}

/** A gateway running as its own process, as on a station. */
export interface GatewayProcess extends AsyncDisposable {
  child: Deno.ChildProcess;
  port: number;
  /** stdout and stderr so far. */
  output: () => string;
}

/**
 * Runs the gateway with `deno run <GATEWAY_FLAGS>` (`main()` with
 * {@linkcode TEST_BASE_DIR} as its folder) and waits for it to listen.
 */
export function spawnGateway(args: string[]): Promise<GatewayProcess> {
  return spawnListening(gatewayCommand(args));
}

/**
 * Runs a command that starts the gateway and waits for its "listening on"
 * line; stopping it sends SIGTERM and waits for the exit.
 *
 * @param command The program and its arguments.
 * @returns The running gateway and its port.
 */
export async function spawnListening(
  command: string[],
): Promise<GatewayProcess> {
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
    } catch {
      // already exited
    }
    await child.status;
    await drained;
  };
  let exited = false;
  child.status.then(() => exited = true);
  try {
    // Ends early when it exits (a port taken is `[emerg] bind()` and exit
    // code 1), so that onFreePort() can try another port at once.
    await waitFor(
      () => /listening on https?:\/\/[^ ]+:\d+\//.test(text) || exited,
      15_000,
    );
    if (!/listening on https?:\/\/[^ ]+:\d+\//.test(text)) {
      throw new Error("no listening line");
    }
  } catch (error) {
    await stop();
    throw new Error(`gateway did not start: ${text}`, { cause: error });
  }
  const port = Number(
    text.match(/listening on https?:\/\/[^ ]+:(\d+)\//)![1],
  );
  return {
    child,
    port,
    output: () => text,
    async [Symbol.asyncDispose]() {
      await stop();
    },
  };
}

/** Runs the CLI to completion (in {@linkcode TEST_BASE_DIR}) and returns its exit code and output. */
export async function runCli(
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const [program, ...rest] = gatewayCommand(args);
  const out = await new Deno.Command(program!, {
    args: rest,
    // Bounded: a command line that starts the gateway by mistake ends here.
    signal: AbortSignal.timeout(60_000),
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
  };
}

/** A raw TCP upstream whose behaviour each test scripts per connection. */
export interface RawUpstream extends AsyncDisposable {
  port: number;
  origin: string;
  /** Connections accepted so far. */
  connections: number;
  /** Every request head (up to the blank line) received, in order. */
  heads: string[];
  /**
   * Settles when the upstream is disposed: a script that holds a connection
   * without reading it (a stalled upstream) waits on this, not on a timer.
   */
  disposed: Promise<void>;
}

/**
 * Reads and drops what arrives until the peer closes the connection (or it
 * is closed here): a silent upstream waits on this for the gateway to give
 * up on it, an event, where a sleep would race the gateway's timer.
 */
export async function untilClosed(conn: Deno.Conn): Promise<void> {
  const buf = new Uint8Array(64 * 1024);
  // Bounded: the peer or the upstream's disposal closes it.
  while ((await conn.read(buf).catch(() => null)) !== null);
}

/** Reads one request head (and returns it) from a raw connection. */
export async function readHead(conn: Deno.Conn): Promise<string | null> {
  const buf = new Uint8Array(64 * 1024);
  let text = "";
  while (!text.includes("\r\n\r\n")) {
    const n = await conn.read(buf).catch(() => null);
    if (n === null) return null;
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  return text;
}

/**
 * Reads one request from a raw connection: its head (without the blank
 * line) and the body its first `Content-Length` declares, bounded by that
 * length (a test's own body); `null` when the connection ends first.
 */
export async function readRequest(
  conn: Deno.Conn,
): Promise<{ head: string; body: string } | null> {
  let text = await readHead(conn);
  if (text === null) return null;
  const end = text.indexOf("\r\n\r\n");
  const head = text.slice(0, end);
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
  const buf = new Uint8Array(16 * 1024);
  while (text.length - end - 4 < length) {
    const n = await conn.read(buf);
    if (n === null) break;
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  return { head, body: text.slice(end + 4) };
}

/**
 * Starts a raw upstream on 127.0.0.1:0 (or `options.port`: one of
 * `refusedPort()`'s, for a server closed mid-test whose port must refuse
 * from then on). `script` runs for each accepted connection with its
 * 0-based index; the connection is closed afterwards unless the script
 * already did.
 */
export function startRawUpstream(
  script: (conn: Deno.Conn, index: number, up: RawUpstream) => Promise<void>,
  options: { port?: number } = {},
): RawUpstream {
  const listener = Deno.listen({
    hostname: "127.0.0.1",
    port: options.port ?? 0,
  });
  const open = new Set<Deno.Conn>();
  const tasks: Promise<void>[] = [];
  const disposal = Promise.withResolvers<void>();
  const up: RawUpstream = {
    port: listener.addr.port,
    origin: `http://127.0.0.1:${listener.addr.port}`,
    connections: 0,
    heads: [],
    disposed: disposal.promise,
    async [Symbol.asyncDispose]() {
      disposal.resolve();
      listener.close();
      for (const c of open) {
        try {
          c.close();
        } catch { /* already closed */ }
      }
      await Promise.allSettled(tasks);
      await accepting;
    },
  };
  const accepting = (async () => {
    try {
      for await (const conn of listener) {
        const index = up.connections++;
        open.add(conn);
        tasks.push(
          script(conn, index, up).catch(() => {}).finally(() => {
            open.delete(conn);
            try {
              conn.close();
            } catch { /* closed by the script */ }
          }),
        );
      }
    } catch { /* listener closed */ }
  })();
  return up;
}

/**
 * A raw upstream that records each request head in `heads` and writes
 * `answer` back when given (without it, it answers nothing).
 */
export function recordingUpstream(answer?: string): RawUpstream {
  return startRawUpstream(async (conn, _i, self) => {
    const head = await readHead(conn);
    if (head) self.heads.push(head);
    if (answer !== undefined) await writeText(conn, answer);
  });
}

/** Writes a whole string to a connection. */
export async function writeText(conn: Deno.Conn, text: string): Promise<void> {
  const bytes = new TextEncoder().encode(text);
  let n = 0;
  while (n < bytes.length) n += await conn.write(bytes.subarray(n));
}

/** Both ends of one TCP connection on 127.0.0.1, and the listener to close. */
export interface LoopbackPair extends AsyncDisposable {
  /** The connecting end (the upstream client's side). */
  client: Deno.TcpConn;
  /** The accepted end (the upstream's side). */
  server: Deno.Conn;
}

/** Opens a TCP connection to a listener on 127.0.0.1, port 0. */
export async function loopbackPair(): Promise<LoopbackPair> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepted = listener.accept();
  const client = await Deno.connect({
    hostname: "127.0.0.1",
    port: listener.addr.port,
  });
  const server = await accepted;
  listener.close();
  const close = (c: Deno.Conn) => {
    try {
      c.close();
    } catch {
      // already closed by the test
    }
  };
  return {
    client,
    server,
    [Symbol.asyncDispose]: () => {
      close(client);
      close(server);
      return Promise.resolve();
    },
  };
}

/**
 * Runs `code` with `deno eval` under the gateway's V8 flags (`--expose-gc`
 * among them), which this test process need not have.
 */
export async function evalWithGatewayV8Flags(
  code: string,
): Promise<{ stdout: string; stderr: string }> {
  const v8 = GATEWAY_FLAGS.find((f) => f.startsWith("--v8-flags="))!;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", v8, code],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}
