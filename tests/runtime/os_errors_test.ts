/** OS errors as nginx prints them, from whatever Deno threw. */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  LINUX_ERROR_TEXT,
  osErrorOf,
  osErrorText,
  type OsFamily,
  WINDOWS_ERROR_TEXT,
} from "../../src/runtime/os_errors.ts";
import { DENO_ERROR_CODES } from "../../src/runtime/os_error_texts.ts";

/** Every `Deno.errors` class with an OS code: [class, errno, Windows code]. */
const CLASSES: [keyof typeof Deno.errors, number, number][] = [
  ["NotFound", 2, 2],
  ["PermissionDenied", 13, 5],
  ["ConnectionRefused", 111, 10061],
  ["ConnectionReset", 104, 10054],
  ["ConnectionAborted", 103, 10053],
  ["NotConnected", 107, 10057],
  ["AddrInUse", 98, 10048],
  ["AddrNotAvailable", 99, 10049],
  ["BrokenPipe", 32, 109],
  ["AlreadyExists", 17, 183],
  ["TimedOut", 110, 10060],
  ["Interrupted", 4, 10004],
  ["WouldBlock", 11, 10035],
  ["Busy", 16, 170],
  ["NotADirectory", 20, 267],
  ["IsADirectory", 21, 336],
  ["FilesystemLoop", 40, 1921],
  ["NetworkUnreachable", 101, 10051],
];

Deno.test("osErrorOf() gives each Deno error class its code and nginx's text on both platforms", async (t) => {
  for (const [name, linux, windows] of CLASSES) {
    await t.step(name, () => {
      const error = new Deno.errors[name]("localized text, no code");
      deepStrictEqual(osErrorOf(error, "linux"), {
        code: linux,
        text: LINUX_ERROR_TEXT[linux],
      });
      deepStrictEqual(osErrorOf(error, "windows"), {
        code: windows,
        text: WINDOWS_ERROR_TEXT[windows],
      });
    });
  }
  deepStrictEqual(
    Object.keys(DENO_ERROR_CODES).sort(),
    CLASSES.map((c) => c[0]).sort(),
  );
});

Deno.test("osErrorOf() has an English text for every code behind a class", () => {
  for (const [name, codes] of Object.entries(DENO_ERROR_CODES)) {
    for (const family of ["linux", "windows"] as OsFamily[]) {
      for (const code of codes[family]) {
        strictEqual(
          osErrorText(code, family).startsWith("Unknown error"),
          false,
          `${name} ${family} ${code}`,
        );
      }
    }
  }
});

Deno.test("osErrorOf() prefers Deno's (os error N) to the class, on both platforms", async (t) => {
  const cases: [Error, OsFamily, number, string][] = [
    [
      new Deno.errors.AlreadyExists("File exists (os error 17): mkdir '/x'"),
      "linux",
      17,
      "File exists",
    ],
    [
      new Deno.errors.NotFound("系统找不到指定的路径。 (os error 3)"),
      "windows",
      3,
      "The system cannot find the path specified",
    ],
    [
      new Deno.errors.NotADirectory("x (os error 267)"),
      "windows",
      267,
      "The directory name is invalid",
    ],
    [
      new Deno.errors.PermissionDenied("x (os error 1)"),
      "linux",
      1,
      "Operation not permitted",
    ],
    [
      new Error("x (os error 10013)"),
      "windows",
      10013,
      "An attempt was made to access a socket in a way forbidden by its access permissions",
    ],
    [
      new TypeError("fetch failed", {
        cause: new Error("tcp connect error (os error 10061)"),
      }),
      "windows",
      10061,
      "No connection could be made because the target machine actively refused it",
    ],
    [new Error("x (os error 9999)"), "linux", 9999, "Unknown error 9999"],
  ];
  for (const [error, family, code, text] of cases) {
    await t.step(error.message, () => {
      deepStrictEqual(osErrorOf(error, family), { code, text });
    });
  }
});

Deno.test("osErrorOf() finds nothing where there is no OS error", () => {
  for (
    const error of [
      new Deno.errors.InvalidData("bad"),
      new Deno.errors.UnexpectedEof("eof"),
      new Deno.errors.BadResource("closed"),
      new Deno.errors.NotCapable("Requires read access"),
      Object.assign(new Error("x"), { name: "toString" }),
      new Error("failed to lookup address information"),
      "a string",
      undefined,
    ]
  ) {
    strictEqual(osErrorOf(error, "linux"), undefined);
  }
});

Deno.test(
  "osErrorOf() reads the errors this OS really throws",
  { ignore: Deno.build.os !== "linux" },
  async () => {
    const dir = await Deno.makeTempDir();
    try {
      await Deno.writeTextFile(`${dir}/file`, "");
      const thrown = (f: () => unknown) => {
        try {
          f();
        } catch (error) {
          return osErrorOf(error, "linux");
        }
        throw new Error("did not throw");
      };
      deepStrictEqual(
        thrown(() =>
          Deno.openSync(`${dir}/file/x`, { create: true, write: true })
        ),
        { code: 20, text: "Not a directory" },
      );
      deepStrictEqual(thrown(() => Deno.readTextFileSync(`${dir}/none`)), {
        code: 2,
        text: "No such file or directory",
      });
      deepStrictEqual(thrown(() => Deno.readTextFileSync(dir)), {
        code: 21,
        text: "Is a directory",
      });
      const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      try {
        deepStrictEqual(
          thrown(() =>
            Deno.listen({ hostname: "127.0.0.1", port: l.addr.port })
          ),
          { code: 98, text: "Address already in use" },
        );
      } finally {
        l.close();
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);
