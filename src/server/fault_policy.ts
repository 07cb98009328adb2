/**
 * The one place that decides, for the whole process, whether a fault is
 * survived or ends the gateway: unhandled rejections, uncaught errors,
 * listeners that stop accepting, and log files that cannot be written. Each fault writes one error-log line with
 * its context; an exit decision resolves {@linkcode FaultPolicy.exited} so
 * `main` returns non-zero and the scheduled task's restart-on-failure runs.
 *
 * @module
 */

import { describeError, type ErrorEvent, type Logger } from "../log/mod.ts";
import {
  currentOsFamily,
  osErrorOf,
  type OsErrorText,
  type OsFamily,
} from "../runtime/mod.ts";

/** Something that went wrong outside any one request. */
export type Fault =
  | { kind: "unhandled-rejection"; reason: unknown }
  | { kind: "uncaught-error"; error: unknown }
  /** A listener's accept loop ended (its `finished` settled) unasked. */
  | {
    kind: "listener-stopped";
    address: string;
    error?: unknown;
    /** How long this listener has been failing without a stable spell. */
    troubleMs: number;
    /** Which failure of this spell it is, from 1. @default {1} */
    failures?: number;
  }
  /** The process's resident memory crossed the ceiling. */
  | { kind: "memory"; rssBytes: number; ceilingBytes: number }
  /**
   * A log file could not be written, reopened or rotated (`LogFile`'s
   * message): the line goes to the main level's error log, so a server's
   * or location's file that fails is still told somewhere.
   */
  | {
    kind: "log-file";
    message: string;
    /** Which failure of this file it is, from 1. @default {1} */
    failures?: number;
  }
  /** A stopped listener could not be bound again. */
  | {
    kind: "rebind-failed";
    address: string;
    error: unknown;
    troubleMs: number;
    /** Which failure of this spell it is, from 1. @default {1} */
    failures?: number;
  };

/** What to do about a fault, and the line that says so. */
export interface FaultVerdict {
  /** `recover` keeps serving; `exit` ends the process with code 1. */
  decision: "recover" | "exit";
  /** The error-log line. */
  line: ErrorEvent;
  /** The line is left out: a repeat within one spell of failures. */
  quiet?: boolean;
}

/** Limits for {@linkcode decideFault}. */
export interface FaultLimits {
  /**
   * A listener failing this long without recovering ends the process,
   * unless it fails for want of descriptors: that heals when clients leave,
   * and a restart would only drop every kept connection.
   */
  listenerGiveUpMs: number;
  /** Unexpected errors allowed within `stormWindowMs` before exiting. */
  stormFaults: number;
  /**
   * Resident memory that is reported (`[alert]`, once per crossing): a
   * station's gateway stays near 100 MB, one 64 MiB WebSocket message and
   * its copies add some 200 MB.
   */
  memoryAlertBytes: number;
}

/** The defaults: 30 s for a listener not out of descriptors, 100 faults a minute. */
export const DEFAULT_FAULT_LIMITS: FaultLimits = {
  listenerGiveUpMs: 30_000,
  stormFaults: 100,
  memoryAlertBytes: 512 * 1024 * 1024,
};

const STORM_WINDOW_MS = 60_000;

/** Whether an OS error means "out of descriptors" (nginx logs these `[crit]`). */
function isDescriptorExhaustion(os: OsErrorText | undefined): boolean {
  return os !== undefined && [23, 24, 10024].includes(os.code);
}

/** Kinds of log file failure counted apart before the counts start over. */
const MAX_LOG_FAILURE_KINDS = 256;

/**
 * Whether the nth failure of a spell is logged: the 1st, 2nd, 4th, 8th …, so
 * a listener refilled for months writes a few dozen lines, not millions.
 */
function logsFailure(n: number): boolean {
  return (n & (n - 1)) === 0;
}

/** `, 8 times in a row` after the first failure of a spell. */
function inARow(n: number): string {
  return n > 1 ? `, ${n} times in a row` : "";
}

/**
 * Decides about one fault. Pure, so the rules are table-tested.
 *
 * @param fault What happened.
 * @param context The limits, recent fault count and OS family.
 * @returns The decision and its log line.
 *
 * @example A listener out of descriptors is recreated
 * ```ts
 * import { decideFault, DEFAULT_FAULT_LIMITS } from "./fault_policy.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const v = decideFault({
 *   kind: "listener-stopped",
 *   address: "127.0.0.1:8081",
 *   error: new Error("Error: Too many open files (os error 24)"),
 *   troubleMs: 0,
 * }, { limits: DEFAULT_FAULT_LIMITS, recentFaults: 0, family: "linux" });
 * strictEqual(v.decision, "recover");
 * strictEqual(v.line.level, "crit");
 * strictEqual(v.line.message, "accept4() failed");
 * ```
 */
export function decideFault(
  fault: Fault,
  context: { limits: FaultLimits; recentFaults: number; family: OsFamily },
): FaultVerdict {
  const { limits, family } = context;
  switch (fault.kind) {
    case "unhandled-rejection":
    case "uncaught-error": {
      const what = fault.kind === "unhandled-rejection"
        ? `unhandled rejection: ${describeError(fault.reason)}`
        : `uncaught exception: ${describeError(fault.error)}`;
      // One bug's error is survivable; a loop of them is not.
      if (context.recentFaults >= limits.stormFaults) {
        return {
          decision: "exit",
          line: {
            level: "emerg",
            message: `${what}, ${context.recentFaults} unexpected errors ` +
              `within ${STORM_WINDOW_MS / 1000} s, exiting`,
          },
        };
      }
      return { decision: "recover", line: { level: "alert", message: what } };
    }
    case "listener-stopped": {
      const os = osErrorOf(fault.error, family);
      const failures = fault.failures ?? 1;
      const exit = !isDescriptorExhaustion(os) &&
        fault.troubleMs >= limits.listenerGiveUpMs;
      // nginx's ngx_event_accept(): EMFILE/ENFILE are [crit], others
      // [alert]; Windows builds call accept(), Linux ones accept4().
      const message = fault.error === undefined
        ? `listener on ${fault.address} closed`
        : os === undefined
        ? `accept() on ${fault.address} failed: ${describeError(fault.error)}`
        : family === "windows"
        ? "accept() failed"
        : "accept4() failed";
      const line: ErrorEvent = {
        level: exit ? "emerg" : isDescriptorExhaustion(os) ? "crit" : "alert",
        message,
        ...(os ? { osError: os } : {}),
        ...(exit
          ? {
            action: `accepting on ${fault.address}, not restored for ${
              Math.round(fault.troubleMs / 1000)
            } s, exiting`,
          }
          : failures > 1
          ? { action: `accepting on ${fault.address}${inARow(failures)}` }
          : {}),
      };
      return {
        decision: exit ? "exit" : "recover",
        line,
        ...(exit || logsFailure(failures) ? {} : { quiet: true }),
      };
    }
    case "log-file": {
      // Served on: the lines of that file are lost, not the requests. A
      // file failing for months writes a few dozen lines, not one each.
      const failures = fault.failures ?? 1;
      return {
        decision: "recover",
        line: {
          level: "alert",
          message: failures > 1
            ? `${fault.message}, ${failures} times`
            : fault.message,
        },
        ...(logsFailure(failures) ? {} : { quiet: true }),
      };
    }
    case "memory": {
      // Logged, not ended: what grew may still be let go, and a restart
      // would drop every connection.
      const mb = (bytes: number) => Math.round(bytes / (1024 * 1024));
      return {
        decision: "recover",
        line: {
          level: "alert",
          message: `memory use ${mb(fault.rssBytes)} MB is over ${
            mb(fault.ceilingBytes)
          } MB`,
        },
      };
    }
    case "rebind-failed": {
      const os = osErrorOf(fault.error, family);
      // Only running out of descriptors can pass; a port someone else took
      // meanwhile (or any other bind failure) will not heal by waiting.
      const exit = !isDescriptorExhaustion(os);
      const failures = fault.failures ?? 1;
      const message = `bind() to ${fault.address} failed` +
        (os ? "" : `: ${describeError(fault.error)}`);
      return {
        decision: exit ? "exit" : "recover",
        line: {
          level: exit ? "emerg" : "crit",
          message: exit ? `${message}, exiting` : message + inARow(failures),
          ...(os ? { osError: os } : {}),
        },
        ...(exit || logsFailure(failures) ? {} : { quiet: true }),
      };
    }
  }
}

/** Applies {@linkcode decideFault} and turns `exit` into a resolved promise. */
export class FaultPolicy {
  #logger: Logger;
  #limits: FaultLimits;
  #now: () => number;
  #family: OsFamily;
  #recent: number[] = [];
  #exit = Promise.withResolvers<number>();
  #exiting = false;
  /**
   * Failures so far of each log file, by what failed (its message names the
   * file): a rotation's failures are each told once by the file, and each
   * must reach the log, not only the 1st, 2nd, 4th … of the file. A few
   * per file; cleared past {@linkcode MAX_LOG_FAILURE_KINDS}.
   */
  #logFailures = new Map<string, number>();
  /** A log file's failure is being written: a failure of that write is not told again. */
  #writingLogFault = false;

  /**
   * Creates the policy.
   *
   * @param logger Where the lines go.
   * @param options Limits, clock and OS family (for tests).
   */
  constructor(
    logger: Logger,
    options: {
      limits?: Partial<FaultLimits>;
      now?: () => number;
      family?: OsFamily;
    } = {},
  ) {
    this.#logger = logger;
    this.#limits = { ...DEFAULT_FAULT_LIMITS, ...options.limits };
    this.#now = options.now ?? Date.now;
    this.#family = options.family ?? currentOsFamily();
  }

  /** The limits in force. */
  get limits(): FaultLimits {
    return this.#limits;
  }

  /** Resolves with the exit code once a fault decided to end the process. */
  get exited(): Promise<number> {
    return this.#exit.promise;
  }

  /**
   * Logs a fault and decides about it.
   *
   * @param fault What happened.
   * @returns `recover` or `exit`.
   */
  report(fault: Fault): "recover" | "exit" {
    const now = this.#now();
    const isError = fault.kind === "unhandled-rejection" ||
      fault.kind === "uncaught-error";
    if (isError) {
      this.#recent = this.#recent.filter((t) => now - t < STORM_WINDOW_MS);
      this.#recent.push(now);
    }
    const verdict = decideFault(fault, {
      limits: this.#limits,
      recentFaults: isError ? this.#recent.length - 1 : 0,
      family: this.#family,
    });
    if (!verdict.quiet) this.#logger.error(verdict.line);
    if (verdict.decision === "exit" && !this.#exiting) {
      this.#exiting = true;
      this.#exit.resolve(1);
    }
    return verdict.decision;
  }

  /**
   * Reports a log file that could not be written, reopened or rotated: an
   * `[alert]` line in the main level's log (unless that write fails too:
   * the caller has written the line to stderr already).
   *
   * @param path The file.
   * @param message What failed, as the file words it.
   */
  logFileFailed(path: string, message: string): void {
    if (this.#writingLogFault) return;
    const key = `${path}\n${message}`;
    const known = this.#logFailures.get(key);
    if (
      known === undefined && this.#logFailures.size >= MAX_LOG_FAILURE_KINDS
    ) {
      this.#logFailures.clear();
    }
    const failures = (known ?? 0) + 1;
    this.#logFailures.set(key, failures);
    this.#writingLogFault = true;
    try {
      this.report({ kind: "log-file", message, failures });
    } finally {
      this.#writingLogFault = false;
    }
  }

  /**
   * Routes the process's unhandled rejections and uncaught errors here
   * instead of Deno's default (a stack trace on stderr and exit code 1).
   *
   * @returns A function that removes the listeners.
   */
  install(): () => void {
    const onRejection = (event: PromiseRejectionEvent) => {
      event.preventDefault();
      this.report({ kind: "unhandled-rejection", reason: event.reason });
    };
    const onError = (event: ErrorEvent_) => {
      event.preventDefault();
      this.report({ kind: "uncaught-error", error: event.error });
    };
    globalThis.addEventListener("unhandledrejection", onRejection);
    globalThis.addEventListener("error", onError);
    return () => {
      globalThis.removeEventListener("unhandledrejection", onRejection);
      globalThis.removeEventListener("error", onError);
    };
  }
}

/** The DOM `ErrorEvent` (named apart from the logger's `ErrorEvent`). */
type ErrorEvent_ = globalThis.ErrorEvent;
