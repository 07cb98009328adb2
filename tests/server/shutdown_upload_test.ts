/**
 * A stop while a client is uploading: the shutdown in process (what a stop
 * signal starts), and a process killed outright.
 */
import { deepStrictEqual, doesNotMatch, match } from "node:assert/strict";
import {
  readHead,
  spawnGateway,
  startRawUpstream,
  waitFor,
  writeText,
} from "../_utils.ts";
import { startMain } from "../_in_process.ts";

Deno.test(
  "a shutdown during an upload (what SIGTERM starts): the client gets 503, never a 499 page, and no line blames it",
  async () => {
    const dir = await Deno.makeTempDir();
    await using _dir = {
      [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
    };
    await using up = startRawUpstream(async (conn) => {
      await readHead(conn);
    });
    // In process: disposing runs the shutdown runGateway() runs after a stop
    // signal (stopping, then the listeners' shutdown); the signal reaching
    // it is main_test.ts's SIGTERM process.
    const gw = await startMain([
      "--listen",
      "127.0.0.1:0",
      "--upstream",
      up.origin,
      "--error-log",
      `${dir}/error.log`,
      "--access-log",
      `${dir}/access.log`,
      "--error-log-level",
      "info",
      "--client-body-temp-path",
      `${dir}/body`,
    ]);
    const client = await Deno.connect({ hostname: "127.0.0.1", port: gw.port });
    let answer = "";
    let stopped: PromiseLike<void> | undefined;
    try {
      await writeText(
        client,
        "POST /api/upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: 40000\r\n\r\n" +
          "u".repeat(20_000),
      );
      // Half the body is in: the gateway has put it in a temporary file.
      const errorLog = () => {
        try {
          return Deno.readTextFileSync(`${dir}/error.log`);
        } catch {
          return "";
        }
      };
      await waitFor(() => errorLog().includes("temporary file"), 10_000);
      stopped = gw[Symbol.asyncDispose]();
      const buf = new Uint8Array(4096);
      const timer = setTimeout(() => client.close(), 10_000);
      try {
        while (!answer.includes("</html>")) {
          const n = await client.read(buf);
          if (n === null) break;
          answer += new TextDecoder().decode(buf.subarray(0, n));
        }
      } catch {
        /* closed */
      } finally {
        clearTimeout(timer);
      }
    } finally {
      try {
        client.close();
      } catch { /* closed */ }
      await (stopped ?? gw[Symbol.asyncDispose]());
    }
    match(answer, /^HTTP\/1\.1 503 /);
    doesNotMatch(answer, /499/);
    const errorLog = await Deno.readTextFile(`${dir}/error.log`);
    doesNotMatch(errorLog, /prematurely closed/);
    match(
      await Deno.readTextFile(`${dir}/access.log`),
      /"POST \/api\/upload HTTP\/1\.1" 503 /,
    );
  },
);

Deno.test(
  "a gateway killed during an upload leaves no temporary file",
  { ignore: Deno.build.os === "windows" },
  async () => {
    const dir = await Deno.makeTempDir();
    await using _dir = {
      [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
    };
    await using up = startRawUpstream(async (conn) => {
      await readHead(conn);
    });
    const gw = await spawnGateway([
      "--listen",
      "127.0.0.1:0",
      "--upstream",
      up.origin,
      "--error-log",
      `${dir}/error.log`,
      "--access-log",
      "off",
      "--error-log-level",
      "warn",
      "--client-body-temp-path",
      `${dir}/body`,
    ]);
    const client = await Deno.connect({ hostname: "127.0.0.1", port: gw.port });
    try {
      await writeText(
        client,
        "POST /api/upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: 900000\r\n\r\n" +
          "k".repeat(400_000),
      );
      const errorLog = () => {
        try {
          return Deno.readTextFileSync(`${dir}/error.log`);
        } catch {
          return "";
        }
      };
      await waitFor(() => errorLog().includes("temporary file"), 10_000);
      gw.child.kill("SIGKILL");
      await gw.child.status;
    } finally {
      client.close();
      await gw[Symbol.asyncDispose]();
    }
    // The file was removed when it was opened: nothing is left behind.
    const left = (await Array.fromAsync(Deno.readDir(`${dir}/body`))).map((e) =>
      e.name
    );
    deepStrictEqual(left, []);
  },
);
