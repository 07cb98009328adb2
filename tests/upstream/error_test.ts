import { strictEqual } from "node:assert/strict";
import { formatErrorLogLine } from "../../src/log/error_log.ts";
import {
  type OsFamily,
  parseOsErrorCode,
} from "../../src/runtime/os_errors.ts";
import {
  type UpstreamAction,
  UpstreamError,
  upstreamErrorFromOs,
  upstreamStatus,
  upstreamTimeout,
} from "../../src/upstream/error.ts";

const WIN_REFUSED =
  "No connection could be made because the target machine actively refused it";
const WIN_TIMEDOUT =
  "A connection attempt failed because the connected party did not properly respond after a period of time, or established connection failed because connected host has failed to respond";

Deno.test("upstreamErrorFromOs() words OS failures as nginx does, per phase and platform", async (t) => {
  const cases: [string, string, UpstreamAction, OsFamily, string, number][] = [
    [
      "refused, Windows (localized Deno text)",
      "由于目标计算机积极拒绝，无法连接。 (os error 10061)",
      "connecting to upstream",
      "windows",
      `connect() failed (10061: ${WIN_REFUSED}) while connecting to upstream`,
      502,
    ],
    [
      "refused, Linux",
      "Connection refused (os error 111)",
      "connecting to upstream",
      "linux",
      "connect() failed (111: Connection refused) while connecting to upstream",
      502,
    ],
    [
      "Windows gave up the SYN: an error, so 502",
      "x (os error 10060)",
      "connecting to upstream",
      "windows",
      `connect() failed (10060: ${WIN_TIMEDOUT}) while connecting to upstream`,
      502,
    ],
    [
      "unreachable host, Windows",
      "x (os error 10065)",
      "connecting to upstream",
      "windows",
      "connect() failed (10065: A socket operation was attempted to an unreachable host) while connecting to upstream",
      502,
    ],
    [
      "unreachable network, Linux",
      "x (os error 101)",
      "connecting to upstream",
      "linux",
      "connect() failed (101: Network is unreachable) while connecting to upstream",
      502,
    ],
    [
      "reset reading the header, Linux",
      "Connection reset by peer (os error 104)",
      "reading response header from upstream",
      "linux",
      "recv() failed (104: Connection reset by peer) while reading response header from upstream",
      502,
    ],
    [
      "reset reading the header, Windows",
      "x (os error 10054)",
      "reading response header from upstream",
      "windows",
      "WSARecv() failed (10054: An existing connection was forcibly closed by the remote host) while reading response header from upstream",
      502,
    ],
    [
      "broken pipe sending, Linux",
      "Broken pipe (os error 32)",
      "sending request to upstream",
      "linux",
      "writev() failed (32: Broken pipe) while sending request to upstream",
      502,
    ],
    [
      "reset sending, Linux",
      "x (os error 104)",
      "sending request to upstream",
      "linux",
      "send() failed (104: Connection reset by peer) while sending request to upstream",
      502,
    ],
    [
      "aborted sending, Windows",
      "x (os error 10053)",
      "sending request to upstream",
      "windows",
      "WSASend() failed (10053: An established connection was aborted by the software in your host machine) while sending request to upstream",
      502,
    ],
    [
      "reset in the body, Linux",
      "x (os error 104)",
      "reading upstream",
      "linux",
      "recv() failed (104: Connection reset by peer) while reading upstream",
      502,
    ],
    [
      "host not found",
      "failed to lookup address information: Name or service not known",
      "connecting to upstream",
      "linux",
      "app.invalid could not be resolved (3: Host not found) while connecting to upstream",
      502,
    ],
  ];
  for (const [name, message, action, family, expected, status] of cases) {
    await t.step(name, () => {
      const e = upstreamErrorFromOs(new Error(message), action, family, {
        upstreamHost: "app.invalid",
      });
      const os = e.osError ? ` (${e.osError.code}: ${e.osError.text})` : "";
      strictEqual(`${e.message}${os} while ${e.action}`, expected);
      strictEqual(upstreamStatus(e), status);
      strictEqual(e.level, "error");
    });
  }
});

Deno.test("upstreamTimeout() prints ETIMEDOUT as nginx does, 504", async (t) => {
  const actions: UpstreamAction[] = [
    "connecting to upstream",
    "sending request to upstream",
    "reading response header from upstream",
    "reading upstream",
  ];
  for (const action of actions) {
    await t.step(action, () => {
      const linux = upstreamTimeout(action, "linux");
      strictEqual(
        `${linux.message} (${linux.osError?.code}: ${linux.osError?.text})`,
        "upstream timed out (110: Connection timed out)",
      );
      const windows = upstreamTimeout(action, "windows");
      strictEqual(
        `${windows.osError?.code}: ${windows.osError?.text}`,
        `10060: ${WIN_TIMEDOUT}`,
      );
      strictEqual(upstreamStatus(windows), 504);
    });
  }
});

Deno.test("UpstreamError.clientClosed() is nginx's info line and status 499", () => {
  const e = UpstreamError.clientClosed();
  strictEqual(e.level, "info");
  strictEqual(upstreamStatus(e), 499);
  strictEqual(
    e.message,
    "client prematurely closed connection, so upstream connection is closed too",
  );
});

Deno.test("upstreamErrorFromOs() gives the interface spec's line from an injected (os error 10061)", () => {
  const e = upstreamErrorFromOs(
    new Deno.errors.ConnectionRefused(
      "No connection could be made because the target machine actively refused it. (os error 10061)",
    ),
    "connecting to upstream",
    "windows",
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
