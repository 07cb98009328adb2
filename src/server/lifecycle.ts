/**
 * The serving part of the gateway's life: bind, serve, survive faults, and
 * stop on a signal, logging every request it gives up on.
 *
 * @module
 */

import { type GatewayConfig, listenHosts } from "../config/mod.ts";
import { createGatewayHandler } from "../gateway.ts";
import { listenPorts } from "../engine_route.ts";
import { ConnectionCounter, describeError, type Logger } from "../log/mod.ts";
import { HeapPacer, osErrorOf, type OsErrorText } from "../runtime/mod.ts";
import { UpstreamError } from "../upstream/mod.ts";
import { type FaultLimits, FaultPolicy } from "./fault_policy.ts";
import { InFlightRequests } from "./in_flight.ts";
import { displayHost, ListenerSet } from "./listener_set.ts";
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
  const counter = new ConnectionCounter();
  const inFlight = new InFlightRequests();
  let handler: ReturnType<typeof createGatewayHandler> | null = null;
  const opened = await ListenerSet.open({
    hostnames: listenHosts(config.listen.hostname),
    port: config.listen.port,
    handler: (req, info) => handler!(req, info),
    onError: serveErrorHandler(logger),
    logger,
    policy,
  });
  if ("failure" in opened) {
    const { address, error } = opened.failure;
    options.emerg(`bind() to ${address} failed`, osErrorOf(error));
    logger.close();
    return 1;
  }
  const listeners = opened.set;
  const port = listeners.port;
  // An nginx.conf's other ports, each its own set of sockets.
  const more: ListenerSet[] = [];
  for (
    const [i, group] of (config.engine ? listenPorts(config.engine) : []).slice(
      1,
    ).entries()
  ) {
    const socket = { index: i + 1, port: group.port };
    const extra = await ListenerSet.open({
      hostnames: [...group.hostnames],
      port: group.port,
      handler: (req, info) => handler!(req, info, socket),
      onError: serveErrorHandler(logger),
      logger,
      policy,
    });
    if ("failure" in extra) {
      const { address, error } = extra.failure;
      options.emerg(`bind() to ${address} failed`, osErrorOf(error));
      await Promise.all([listeners, ...more].map((l) => l.shutdown()));
      logger.close();
      return 1;
    }
    socket.port = extra.set.port;
    more.push(extra.set);
  }
  handler = createGatewayHandler(config, {
    port,
    version: options.version,
    logFiles: { error: config.errorLog, access: config.accessLog },
  }, { logger, counter, inFlight, onConnect: () => counter.take() });

  const heapPacer = new HeapPacer();
  heapPacer.start();
  const ceilingBytes = policy.limits.memoryAlertBytes;
  const memoryWatch = new MemoryWatch({
    ceilingBytes,
    onOver: (rssBytes) =>
      policy.report({ kind: "memory", rssBytes, ceilingBytes }),
  });
  memoryWatch.start();

  const urls = [listeners, ...more].flatMap((set) =>
    set.hostnames.map((h) => `http://${displayHost(h)}:${set.port}/`)
  );
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
  inFlight.stopping = true;
  const graceful = Promise.all(
    [listeners, ...more].map((set) => set.shutdown()),
  ).then(() => "done" as const);
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
    inFlight.abandonAll();
  }
  uninstall();
  handler?.close();
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
 * connection is cut whatever is returned). Anything else is a defect:
 * an `[alert]` line.
 *
 * @param logger Where the alert goes.
 * @returns The handler.
 */
export function serveErrorHandler(
  logger: Logger,
): (error: unknown) => Response {
  return (error) => {
    if (!(error instanceof UpstreamError)) {
      logger.error({
        level: "alert",
        message: `unexpected error: ${describeError(error)}`,
      });
    }
    return new Response("Internal Server Error", { status: 500 });
  };
}
