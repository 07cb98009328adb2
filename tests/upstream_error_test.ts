import { strictEqual } from "node:assert/strict";
import { formatErrorLogLine } from "../src/error_log.ts";
import type { OsFamily } from "../src/os_errors.ts";
import {
  parseOsErrorCode,
  toUpstreamError,
  upstreamStatus,
} from "../src/upstream_error.ts";

/** What Deno 2.9.6's fetch throws: TypeError("fetch failed", { cause }). */
function fetchFailure(detail: string): TypeError {
  return new TypeError("fetch failed", { cause: new Error(detail) });
}

const WIN_REFUSED =
  "No connection could be made because the target machine actively refused it";

Deno.test("toUpstreamError() classifies Deno fetch failures as nginx does", async (t) => {
  const cases: {
    name: string;
    thrown: unknown;
    family: OsFamily;
    context?: { timedOut?: boolean; clientClosed?: boolean };
    message: string;
    os?: string;
    action: string;
    status: number;
    level?: string;
  }[] = [
    {
      name: "refused, Windows",
      thrown: fetchFailure(
        "error sending request for url (http://127.0.0.1:8080/loginms): client error (Connect): tcp connect error: 由于目标计算机积极拒绝，无法连接。 (os error 10061)",
      ),
      family: "windows",
      message: "connect() failed",
      os: `10061: ${WIN_REFUSED}`,
      action: "connecting to upstream",
      status: 502,
    },
    {
      name: "refused, Linux",
      thrown: fetchFailure(
        "error sending request for url (http://127.0.0.1:8080/x): client error (Connect): tcp connect error: Connection refused (os error 111)",
      ),
      family: "linux",
      message: "connect() failed",
      os: "111: Connection refused",
      action: "connecting to upstream",
      status: 502,
    },
    {
      name: "refused, Deno <= 2.9.1 message shape",
      thrown: new TypeError(
        "error sending request for url (http://127.0.0.1:8080/x): client error (Connect): tcp connect error: refused (os error 10061)",
      ),
      family: "windows",
      message: "connect() failed",
      os: `10061: ${WIN_REFUSED}`,
      action: "connecting to upstream",
      status: 502,
    },
    {
      name: "Windows gave up the SYN (10060) is a 502, not a 504",
      thrown: fetchFailure(
        "client error (Connect): tcp connect error: x (os error 10060)",
      ),
      family: "windows",
      message: "connect() failed",
      os:
        "10060: A connection attempt failed because the connected party did not properly respond after a period of time, or established connection failed because connected host has failed to respond",
      action: "connecting to upstream",
      status: 502,
    },
    {
      name: "unreachable host, Windows",
      thrown: fetchFailure(
        "client error (Connect): tcp connect error: x (os error 10065)",
      ),
      family: "windows",
      message: "connect() failed",
      os: "10065: A socket operation was attempted to an unreachable host",
      action: "connecting to upstream",
      status: 502,
    },
    {
      name: "reset, Windows",
      thrown: fetchFailure(
        "client error (SendRequest): connection error: x (os error 10054)",
      ),
      family: "windows",
      message: "WSARecv() failed",
      os:
        "10054: An existing connection was forcibly closed by the remote host",
      action: "reading response header from upstream",
      status: 502,
    },
    {
      name: "reset, Linux",
      thrown: fetchFailure(
        "client error (SendRequest): connection error: Connection reset by peer (os error 104)",
      ),
      family: "linux",
      message: "recv() failed",
      os: "104: Connection reset by peer",
      action: "reading response header from upstream",
      status: 502,
    },
    {
      name: "closed before the response",
      thrown: fetchFailure(
        "error sending request from 127.0.0.1:40994 for http://127.0.0.1:41851/x (127.0.0.1:41851): client error (SendRequest): connection closed before message completed",
      ),
      family: "linux",
      message: "upstream prematurely closed connection",
      action: "reading response header from upstream",
      status: 502,
    },
    {
      name: "host not found",
      thrown: fetchFailure(
        "client error (Connect): dns error: failed to lookup address information: Name or service not known",
      ),
      family: "linux",
      message: "upstream.invalid could not be resolved",
      os: "3: Host not found",
      action: "connecting to upstream",
      status: 502,
    },
    {
      name: "gateway timer fired, Windows text",
      thrown: new DOMException("header timeout", "TimeoutError"),
      family: "windows",
      context: { timedOut: true },
      message: "upstream timed out",
      os:
        "10060: A connection attempt failed because the connected party did not properly respond after a period of time, or established connection failed because connected host has failed to respond",
      action: "reading response header from upstream",
      status: 504,
    },
    {
      name: "client went away",
      thrown: new DOMException("aborted", "AbortError"),
      family: "linux",
      context: { clientClosed: true },
      message:
        "client prematurely closed connection, so upstream connection is closed too",
      action: "sending request to upstream",
      status: 499,
      level: "info",
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      const e = toUpstreamError(c.thrown, {
        family: c.family,
        upstreamHost: "upstream.invalid",
        ...c.context,
      });
      strictEqual(e.message, c.message);
      strictEqual(
        e.osError === undefined
          ? undefined
          : `${e.osError.code}: ${e.osError.text}`,
        c.os,
      );
      strictEqual(e.action, c.action);
      strictEqual(upstreamStatus(e), c.status);
      strictEqual(e.level, c.level ?? "error");
    });
  }
});

Deno.test("toUpstreamError() gives the interface spec's line from an injected (os error 10061)", () => {
  const e = toUpstreamError(
    fetchFailure(
      "error sending request for url (http://127.0.0.1:8080/loginms): client error (Connect): tcp connect error: (os error 10061)",
    ),
    { family: "windows" },
  );
  const line = formatErrorLogLine({
    time: new Date(2024, 0, 15, 10, 23, 45),
    level: e.level,
    pid: 1234,
    tid: 5678,
    connection: 12,
    message: e.message,
    ...(e.osError ? { osError: e.osError } : {}),
    action: e.action,
    client: "127.0.0.1",
    server: "localhost",
    request: "POST /api/loginms HTTP/1.1",
    upstream: "http://127.0.0.1:8080/loginms",
    host: "localhost:8081",
    referrer: "http://localhost:8081/",
  });
  strictEqual(
    line,
    '2024/01/15 10:23:45 [error] 1234#5678: *12 connect() failed (10061: No connection could be made because the target machine actively refused it) while connecting to upstream, client: 127.0.0.1, server: localhost, request: "POST /api/loginms HTTP/1.1", upstream: "http://127.0.0.1:8080/loginms", host: "localhost:8081", referrer: "http://localhost:8081/"',
  );
});

Deno.test("parseOsErrorCode() reads Deno's (os error N) and nothing else", () => {
  strictEqual(parseOsErrorCode("x (os error 111)"), 111);
  strictEqual(parseOsErrorCode("os error 111"), undefined);
  strictEqual(parseOsErrorCode("fetch failed"), undefined);
});
