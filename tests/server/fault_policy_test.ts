import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import {
  decideFault,
  DEFAULT_FAULT_LIMITS,
  type Fault,
  FaultPolicy,
} from "../../src/server/fault_policy.ts";
import { createLogger } from "../../src/log/logger.ts";
import { formatErrorLogLine } from "../../src/log/error_log.ts";
import { waitFor } from "../_utils.ts";

const EMFILE = new Error("Error: Too many open files (os error 24)");
const WSAEMFILE = new Error("Error: Too many open files. (os error 10024)");

function line(fault: Fault, family: "linux" | "windows" = "linux", recent = 0) {
  const v = decideFault(fault, {
    limits: DEFAULT_FAULT_LIMITS,
    recentFaults: recent,
    family,
  });
  return {
    decision: v.decision,
    text: formatErrorLogLine({ ...v.line, time: new Date(0), pid: 1, tid: 1 })
      .replace(/^.*? \[/, "["),
  };
}

Deno.test("decideFault() recovers or exits per fault, with nginx's accept line", () => {
  const address = "127.0.0.1:8081";
  const cases: [string, Fault, "linux" | "windows", string, string][] = [
    [
      "EMFILE: listen again",
      { kind: "listener-stopped", address, error: EMFILE, troubleMs: 0 },
      "linux",
      "recover",
      "[crit] 1#1: accept4() failed (24: Too many open files)",
    ],
    [
      "Windows names accept()",
      { kind: "listener-stopped", address, error: WSAEMFILE, troubleMs: 0 },
      "windows",
      "recover",
      "[crit] 1#1: accept() failed (10024: Too many open files)",
    ],
    [
      "another OS error is [alert]",
      {
        kind: "listener-stopped",
        address,
        error: new Error("Error: Cannot allocate memory (os error 12)"),
        troubleMs: 0,
      },
      "linux",
      "recover",
      "[alert] 1#1: accept4() failed (12: Cannot allocate memory)",
    ],
    [
      "closed without an error",
      { kind: "listener-stopped", address, troubleMs: 0 },
      "linux",
      "recover",
      "[alert] 1#1: listener on 127.0.0.1:8081 closed",
    ],
    [
      "out of descriptors for an hour, the 8th time: listen again",
      {
        kind: "listener-stopped",
        address,
        error: EMFILE,
        troubleMs: 3_600_000,
        failures: 8,
      },
      "linux",
      "recover",
      "[crit] 1#1: accept4() failed (24: Too many open files) while accepting on 127.0.0.1:8081, 8 times in a row",
    ],
    [
      "another error, down for 30 s: exit",
      {
        kind: "listener-stopped",
        address,
        error: new Error("Error: Cannot allocate memory (os error 12)"),
        troubleMs: 31_000,
      },
      "linux",
      "exit",
      "[emerg] 1#1: accept4() failed (12: Cannot allocate memory) while accepting on 127.0.0.1:8081, not restored for 31 s, exiting",
    ],
    [
      "rebind out of descriptors: retry",
      { kind: "rebind-failed", address, error: EMFILE, troubleMs: 1000 },
      "linux",
      "recover",
      "[crit] 1#1: bind() to 127.0.0.1:8081 failed (24: Too many open files)",
    ],
    [
      "rebind out of descriptors for an hour: retry",
      {
        kind: "rebind-failed",
        address,
        error: EMFILE,
        troubleMs: 3_600_000,
        failures: 4,
      },
      "linux",
      "recover",
      "[crit] 1#1: bind() to 127.0.0.1:8081 failed, 4 times in a row (24: Too many open files)",
    ],
    [
      "rebind to a port taken meanwhile: exit",
      {
        kind: "rebind-failed",
        address,
        error: new Error("Address already in use (os error 98)"),
        troubleMs: 600,
      },
      "linux",
      "exit",
      "[emerg] 1#1: bind() to 127.0.0.1:8081 failed, exiting (98: Address already in use)",
    ],
    [
      "memory over the ceiling: say so, keep serving",
      {
        kind: "memory",
        rssBytes: 600 * 1024 * 1024,
        ceilingBytes: 512 * 1024 * 1024,
      },
      "linux",
      "recover",
      "[alert] 1#1: memory use 600 MB is over 512 MB",
    ],
    [
      "an unhandled rejection: keep serving",
      { kind: "unhandled-rejection", reason: "plain reason" },
      "linux",
      "recover",
      "[alert] 1#1: unhandled rejection: plain reason",
    ],
  ];
  for (const [name, fault, family, decision, text] of cases) {
    deepStrictEqual(line(fault, family), { decision, text }, name);
  }
});

Deno.test("decideFault() logs the 1st, 2nd, 4th, 8th … failure of a spell only", () => {
  const logged: number[] = [];
  for (let failures = 1; failures <= 1000; failures++) {
    const v = decideFault({
      kind: "listener-stopped",
      address: "127.0.0.1:8081",
      error: EMFILE,
      troubleMs: failures * 10_000,
      failures,
    }, { limits: DEFAULT_FAULT_LIMITS, recentFaults: 0, family: "linux" });
    strictEqual(v.decision, "recover");
    if (!v.quiet) logged.push(failures);
  }
  deepStrictEqual(logged, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]);
});

Deno.test("decideFault() exits after a storm of unexpected errors", () => {
  const fault: Fault = { kind: "uncaught-error", error: new TypeError("x") };
  strictEqual(line(fault, "linux", 99).decision, "recover");
  const storm = line(fault, "linux", 100);
  strictEqual(storm.decision, "exit");
  match(
    storm.text,
    /^\[emerg\] 1#1: uncaught exception: TypeError: x at .+, 100 unexpected errors within 60 s, exiting$/,
  );
});

Deno.test("FaultPolicy logs unhandled rejections and uncaught errors as one line each", async () => {
  const lines: string[] = [];
  const logger = createLogger({
    errorLog: { write: (l) => lines.push(l) },
    accessLog: null,
  });
  const policy = new FaultPolicy(logger);
  const uninstall = policy.install();
  try {
    // One fault at a time, each awaited by its line: which of a rejection
    // and a timer's throw reaches its handler first is the event loop's
    // choice, and under load it flips.
    Promise.reject(new Error("lost promise"));
    await waitFor(() => lines.length === 1, 10_000);
    setTimeout(() => {
      throw new TypeError("timer bug");
    }, 0);
    await waitFor(() => lines.length === 2, 10_000);
  } finally {
    uninstall();
  }
  strictEqual(lines.length, 2, lines.join("\n"));
  match(
    lines[0]!,
    /\[alert\] \d+#\d+: unhandled rejection: Error: lost promise at /,
  );
  match(
    lines[1]!,
    /\[alert\] \d+#\d+: uncaught exception: TypeError: timer bug at /,
  );
});

Deno.test("FaultPolicy resolves exited with 1 when a fault ends the process", async () => {
  const lines: string[] = [];
  const policy = new FaultPolicy(
    createLogger({
      errorLog: { write: (l) => lines.push(l) },
      accessLog: null,
    }),
    { limits: { stormFaults: 2 } },
  );
  for (let i = 0; i < 3; i++) {
    policy.report({ kind: "unhandled-rejection", reason: `r${i}` });
  }
  strictEqual(await policy.exited, 1);
  strictEqual(lines.length, 3);
  match(lines[2]!, /\[emerg\]/);
});

Deno.test("FaultPolicy writes a log file's failure to the main log, the 1st, 2nd, 4th … of each failure of each file, and never again for its own write", () => {
  const lines: string[] = [];
  let policy: FaultPolicy | null = null;
  const logger = createLogger({
    errorLog: {
      write: (l) => {
        lines.push(l.replace(/^.*? \[/, "["));
        // The main log failing as well: its own failure is not told again.
        if (l.includes("main.log")) policy!.logFileFailed("/main.log", l);
      },
    },
    accessLog: null,
    pid: 1,
    tid: 1,
  });
  policy = new FaultPolicy(logger);
  for (let i = 1; i <= 5; i++) {
    policy.logFileFailed("/loc.log", 'cannot write log file "/loc.log"');
  }
  policy.logFileFailed("/b.log", 'cannot reopen log file "/b.log"');
  policy.logFileFailed("/main.log", 'cannot write log file "/main.log"');
  // A rotation's failures, each told once by the file: each is logged,
  // however many failures of the file came before.
  for (const slot of [1, 2, 3]) {
    policy.logFileFailed(
      "/loc.log",
      `cannot rotate log file "/loc.log": rename() ".${slot}" failed`,
    );
  }
  deepStrictEqual(lines, [
    '[alert] 1#1: cannot write log file "/loc.log"',
    '[alert] 1#1: cannot write log file "/loc.log", 2 times',
    '[alert] 1#1: cannot write log file "/loc.log", 4 times',
    '[alert] 1#1: cannot reopen log file "/b.log"',
    '[alert] 1#1: cannot write log file "/main.log"',
    '[alert] 1#1: cannot rotate log file "/loc.log": rename() ".1" failed',
    '[alert] 1#1: cannot rotate log file "/loc.log": rename() ".2" failed',
    '[alert] 1#1: cannot rotate log file "/loc.log": rename() ".3" failed',
  ]);
});
