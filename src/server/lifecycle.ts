/**
 * The serving part of the gateway's life: bind, serve, survive faults, and
 * stop on a signal, logging every request it gives up on.
 *
 * @module
 */

import { makeResponse } from "../response/mod.ts";
import { type GatewayConfig, listenHosts } from "../config/mod.ts";
import { createGatewayHandler } from "../gateway.ts";
import { listenPorts } from "../request/mod.ts";
import { ConnectionCut } from "../closing_connections.ts";
import type { ListenGroup } from "../engine/mod.ts";
import type { GatewayStats } from "../status.ts";
import { ConnectionCounter, describeError, type Logger } from "../log/mod.ts";
import { HeapPacer, osErrorOf, type OsErrorText } from "../runtime/mod.ts";
import { UpstreamError } from "../upstream/mod.ts";
import { type FaultLimits, FaultPolicy } from "./fault_policy.ts";
import { InFlightRequests } from "./in_flight.ts";
import { type BindFailure, displayHost, ListenerSet } from "./listener_set.ts";
import { MemoryWatch } from "./memory_watch.ts";

/** How long in-flight requests may take to finish at shutdown by default. */
const SHUTDOWN_GRACE_MS = 10_000;

/** What {@linkcode runGateway} needs besides the configuration. */
export interface RunGatewayOptions {
  /** The gateway's version. */
  version: string;
  /** The open logs; closed before `runGateway` returns. */
  logger: Logger;
  /** Writes to stdout, never failing. */
  out: (text: string) => void;
  /** Writes an `[emerg]` line to stderr and the log. */
  emerg: (message: string, osError: OsErrorText | undefined) => void;
  /** How long in-flight requests may take at shutdown. @default {10000} */
  shutdownGraceMs?: number;
  /** When a fault ends the process (defaults: {@linkcode FaultPolicy}). */
  faultLimits?: Partial<FaultLimits>;
  /**
   * The first pause before a listener whose accept loop ended binds again
   * (see {@linkcode ServeOptions.relistenMs}). @default {500}
   */
  relistenMs?: number;
}

const SIGNAL_NUMBERS: Partial<Record<Deno.Signal, number>> = {
  SIGINT: 2,
  SIGTERM: 15,
  SIGBREAK: 21,
};

/** Resolves with the first stop signal (Ctrl+C, SIGTERM, Ctrl+Break). */
function stopSignal(): { signal: Promise<Deno.Signal>; remove: () => void } {
  const signals: Deno.Signal[] = Deno.build.os === "windows"
    ? ["SIGINT", "SIGBREAK"]
    : ["SIGINT", "SIGTERM"];
  const stopped = Promise.withResolvers<Deno.Signal>();
  const listeners = signals.map((signal) => {
    const listener = () => stopped.resolve(signal);
    Deno.addSignalListener(signal, listener);
    return [signal, listener] as const;
  });
  return {
    signal: stopped.promise,
    remove: () => {
      for (const [s, l] of listeners) Deno.removeSignalListener(s, l);
    },
  };
}

/** What {@linkcode startServing} needs besides the configuration. */
export interface ServeOptions {
  /** The gateway's version. */
  version: string;
  /** The open logs (left open). */
  logger: Logger;
  /**
   * Decides about a listener that stops; not installed here (a new one with
   * the default limits when absent).
   */
  policy?: FaultPolicy;
  /** Match `/api/` ignoring case (tests; the OS decides otherwise). */
  caseless?: boolean;
  /** The upstream group's clock in milliseconds (tests). */
  now?: () => number;
  /**
   * The request counters (a new set when absent): tests wait on
   * `requests` to know the handler has a request before they send more.
   */
  stats?: GatewayStats;
  /**
   * The first pause before a listener whose accept loop ended binds again,
   * doubling with each failure of a spell up to 10 s (`ListenerSet`); tests
   * shorten nginx's `accept_mutex_delay` schedule with it. @default {500}
   */
  relistenMs?: number;
}

/** A gateway serving: its listeners, upstream groups and requests. */
export interface Serving {
  /** The first server's port. */
  port: number;
  /** The first server's bound hostnames. */
  hostnames: string[];
  /** Every address served, as URLs (`http://127.0.0.1:8081/`). */
  urls: string[];
  /** Gives up on requests still open (each gets its access line). */
  abandonInFlight(): void;
  /** Stops accepting and waits for requests in flight (no time limit). */
  shutdown(): Promise<void>;
  /** Closes the upstream groups' connections; after {@linkcode shutdown}. */
  close(): void;
  /** Shutdown has begun: a body cut off now is not the client leaving. */
  stopping(): void;
}

/**
 * Binds the listeners and serves the configuration: the part of the start
 * `runGateway` and the tests share (the process-wide parts, signals, the
 * fault handlers and the heap pacer, are `runGateway`'s).
 *
 * @param config The resolved configuration.
 * @param options The version, logs and fault policy.
 * @returns The serving gateway, or the address that could not be bound.
 */
export async function startServing(
  config: GatewayConfig,
  options: ServeOptions,
): Promise<{ serving: Serving } | { failure: BindFailure }> {
  const { logger } = options;
  const counter = new ConnectionCounter();
  const inFlight = new InFlightRequests();
  const policy = options.policy ?? new FaultPolicy(logger);
  // A log file that fails is told in the main level's log too.
  logger.onFileError = (path, message) => policy.logFileFailed(path, message);
  let handler: ReturnType<typeof createGatewayHandler> | null = null;
  const groups = config.engine ? listenPorts(config.engine) : [];
  // The first socket's port is known once bound.
  const firstSocket = { index: 0, port: config.listen.port, tls: true };
  const relisten = options.relistenMs === undefined
    ? {}
    : { retryMs: options.relistenMs };
  const opened = await ListenerSet.open({
    hostnames: listenHosts(config.listen.hostname),
    port: config.listen.port,
    ...tlsOf(groups[0]),
    handler: groups[0]?.ssl
      ? (req, info) => handler!(req, info, firstSocket)
      : (req, info) => handler!(req, info),
    onError: serveErrorHandler(logger),
    logger,
    policy,
    ...relisten,
  });
  if ("failure" in opened) return opened;
  const first = opened.set;
  firstSocket.port = first.port;
  const sets = [first];
  // An nginx.conf's other ports, each its own set of sockets.
  const ports = groups.slice(1);
  for (const [i, group] of ports.entries()) {
    const socket = { index: i + 1, port: group.port, tls: group.ssl };
    const extra = await ListenerSet.open({
      hostnames: [...group.hostnames],
      port: group.port,
      ...tlsOf(group),
      handler: (req, info) => handler!(req, info, socket),
      onError: serveErrorHandler(logger),
      logger,
      policy,
      ...relisten,
    });
    if ("failure" in extra) {
      await Promise.all(sets.map((set) => set.shutdown()));
      return extra;
    }
    socket.port = extra.set.port;
    sets.push(extra.set);
  }
  const serving = handler = createGatewayHandler(config, {
    port: first.port,
    version: options.version,
    logFiles: { error: config.errorLog, access: config.accessLog },
    ...(options.caseless === undefined ? {} : { caseless: options.caseless }),
  }, {
    logger,
    counter,
    inFlight,
    onConnect: () => counter.take(),
    ...(options.now ? { now: options.now } : {}),
    ...(options.stats ? { stats: options.stats } : {}),
  });
  return {
    serving: {
      port: first.port,
      hostnames: first.hostnames,
      urls: sets.flatMap((set) =>
        set.hostnames.map((h) =>
          `${set.scheme}://${displayHost(h)}:${set.port}/`
        )
      ),
      abandonInFlight: () => inFlight.abandonAll(),
      shutdown: async () => {
        await Promise.all(sets.map((set) => set.shutdown()));
      },
      close: () => serving.close(),
      stopping: () => {
        inFlight.stopping = true;
      },
    },
  };
}

/**
 * The certificate of a TLS port, loaded with the configuration
 * (`loadNginxConf`); nothing for plain HTTP.
 */
function tlsOf(
  group: ListenGroup | undefined,
): { tls?: { cert: string; key: string } } {
  if (group === undefined || !group.ssl) return {};
  const pem = group.certificate?.pem;
  if (!pem) {
    // loadNginxConf loads every certificate or refuses the file.
    throw new TypeError(
      `Cannot serve port ${group.port} with TLS: its certificate was not loaded`,
    );
  }
  return { tls: pem };
}

/**
 * Serves until a stop signal (exit code 0) or a fault the policy will not
 * survive (exit code 1), or fails to bind (exit code 1).
 *
 * @param config The resolved configuration.
 * @param options Logs, output and shutdown grace.
 * @returns The process exit code.
 */
export async function runGateway(
  config: GatewayConfig,
  options: RunGatewayOptions,
): Promise<number> {
  const { logger } = options;
  const graceMs = options.shutdownGraceMs ?? SHUTDOWN_GRACE_MS;
  const policy = new FaultPolicy(
    logger,
    options.faultLimits ? { limits: options.faultLimits } : {},
  );
  const started = await startServing(config, {
    version: options.version,
    logger,
    policy,
    ...(options.relistenMs === undefined
      ? {}
      : { relistenMs: options.relistenMs }),
  });
  if ("failure" in started) {
    const { address, error } = started.failure;
    options.emerg(`bind() to ${address} failed`, osErrorOf(error));
    logger.close();
    return 1;
  }
  const listeners = started.serving;

  const heapPacer = new HeapPacer();
  heapPacer.start();
  const ceilingBytes = policy.limits.memoryAlertBytes;
  const memoryWatch = new MemoryWatch({
    ceilingBytes,
    onOver: (rssBytes) =>
      policy.report({ kind: "memory", rssBytes, ceilingBytes }),
  });
  memoryWatch.start();

  const urls = listeners.urls;
  options.out(
    `station-gateway ${options.version} listening on ${urls.join(" and ")}; ` +
      `/${config.apiPrefix}/ -> ${
        config.upstreams.map((u) => u.address.origin + "/").join(", ")
      }; root ${config.root}; ` +
      `error log ${config.errorLog}\n`,
  );
  logger.error({
    level: "notice",
    message: `station-gateway/${options.version} started`,
  });

  // A bug's exception must neither end a gateway nobody watches nor pass
  // unseen: the policy logs each one and decides.
  const uninstall = policy.install();
  const stop = stopSignal();
  const reason = await Promise.race([
    stop.signal.then((signal) => ({ signal })),
    policy.exited.then((code) => ({ code })),
  ]);
  stop.remove();

  if ("signal" in reason) {
    logger.error({
      level: "notice",
      message: `signal ${
        SIGNAL_NUMBERS[reason.signal]
      } (${reason.signal}) received, exiting`,
    });
  }
  listeners.stopping();
  const graceful = listeners.shutdown().then(() => "done" as const);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(resolve, graceMs, "timeout");
  });
  const outcome = await Promise.race([graceful, timeout]);
  clearTimeout(timer);
  if (outcome === "timeout") {
    logger.error({
      level: "warn",
      message: `in-flight requests still open after ${graceMs} ms, exiting`,
    });
    // Each request given up on still gets its access line, as nginx writes
    // one for every connection closed by worker_shutdown_timeout.
    listeners.abandonInFlight();
  }
  uninstall();
  listeners.close();
  heapPacer.stop();
  memoryWatch.stop();
  logger.error({ level: "notice", message: "exit" });
  logger.close();
  return "code" in reason ? reason.code : 0;
}

/**
 * `Deno.serve`'s `onError`. A body stream that failed after the head went
 * out arrives here; an {@linkcode UpstreamError} is such a failure and was
 * logged where it happened, with its request, as nginx logs it (the
 * connection is cut whatever is returned); a {@linkcode ConnectionCut} is
 * the gateway closing a connection on purpose. Anything else is a defect:
 * an `[alert]` line.
 *
 * @param logger Where the alert goes.
 * @returns The handler.
 */
export function serveErrorHandler(
  logger: Logger,
): (error: unknown) => Response {
  return (error) => {
    if (!(error instanceof UpstreamError || error instanceof ConnectionCut)) {
      logger.error({
        level: "alert",
        message: `unexpected error: ${describeError(error)}`,
      });
    }
    return makeResponse("Internal Server Error", { status: 500 });
  };
}
