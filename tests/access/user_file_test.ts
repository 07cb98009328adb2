import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  lookupUser,
  MAX_VALUE_BYTES,
  parseBasicCredentials,
  UserFileScanner,
} from "../../src/access/mod.ts";

// ngx_http_auth_basic_user's reading of the header.
const HEADERS: [string | null, { user: string; password: string } | null][] = [
  ["Basic dTpw", { user: "u", password: "p" }],
  ["basic dTpw", { user: "u", password: "p" }],
  ["BASIC    dTpw", { user: "u", password: "p" }],
  ["Basic dTo=", { user: "u", password: "" }],
  ["Basic dTo=garbage after padding", { user: "u", password: "" }],
  ["Basic dTpwOnE=", { user: "u", password: "p:q" }], // u:p:q
  ["Basic OnA=", null], // ":p": no user
  ["Basic dXNlcg==", null], // "user": no colon
  ["Basic", null],
  ["Basic ", null],
  ["Basic\tdTpw", null],
  ["Basic dTpw!", null],
  ["Basic dTpwA", null], // 5 chars: one more than a multiple of four
  ["Bearer dTpw", null],
  ["Basicx dTpw", null],
  [null, null],
  ["Basic w6k6cA==", { user: "\u00c3\u00a9", password: "p" }], // "é" as bytes
];
for (const [header, want] of HEADERS) {
  Deno.test(
    `parseBasicCredentials() ${JSON.stringify(header)} as nginx reads it`,
    () => {
      deepStrictEqual(parseBasicCredentials(header), want);
    },
  );
}

function scan(text: string, user: string, chunk = 1e9): string | null {
  const bytes = new TextEncoder().encode(text);
  const scanner = new UserFileScanner(user);
  for (let i = 0; i < bytes.length; i += chunk) {
    const found = scanner.feed(bytes.subarray(i, i + chunk));
    if (found !== null) return found;
  }
  return scanner.end();
}

// [file, user, value or null]
const FILES: [string, string, string | null][] = [
  ["ann:{PLAIN}a\nbob:{PLAIN}b\n", "bob", "{PLAIN}b"],
  ["ann:{PLAIN}a\r\nbob:{PLAIN}b\r\n", "bob", "{PLAIN}b"], // CRLF
  ["ann:{PLAIN}a\r\nbob:{PLAIN}b", "bob", "{PLAIN}b"], // no final newline
  ["bob:x:comment field\n", "bob", "x"],
  ["# bob:commented\nbob:real\n", "bob", "real"],
  ["#bob:commented\n", "bob", null],
  ["\rbob:skipped\n", "bob", null],
  ["\n\n\nbob:after blank lines\n", "bob", "after blank lines"],
  [" bob:leading space\n", "bob", null],
  ["bobby:x\nbob:y\n", "bob", "y"],
  ["bo:x\n", "bob", null],
  ["bob\n", "bob", null], // a malformed line: no colon
  ["malformed line without colon\nbob:ok\n", "bob", "ok"],
  ["bob:first\nbob:second\n", "bob", "first"],
  ["Bob:x\n", "bob", null], // names are compared byte for byte
  ["bob:\n", "bob", ""],
  ["", "bob", null],
];
for (const [file, user, want] of FILES) {
  Deno.test(`UserFileScanner ${JSON.stringify(file)} for ${user}`, () => {
    strictEqual(scan(file, user), want);
    // Chunk boundaries anywhere give the same answer.
    for (const chunk of [1, 2, 3, 7]) {
      strictEqual(scan(file, user, chunk), want);
    }
  });
}

Deno.test("UserFileScanner cuts a value at nginx's 2048 bytes", () => {
  const long = "a".repeat(5000);
  strictEqual(scan(`bob:${long}\n`, "bob")?.length, MAX_VALUE_BYTES);
});

Deno.test("lookupUser() scans a large file in bounded chunks and closes it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/users`;
    // About 4 MiB of other users before the one asked for.
    const line = `user${"x".repeat(60)}:{PLAIN}nope\n`;
    const filler = line.repeat(Math.ceil(4 * 1024 * 1024 / line.length));
    await Deno.writeTextFile(path, `${filler}ann:{PLAIN}pw\n`);
    deepStrictEqual(await lookupUser(path, "ann"), {
      kind: "found",
      value: "{PLAIN}pw",
    });
    deepStrictEqual(await lookupUser(path, "zed"), { kind: "not-found" });
    const missing = await lookupUser(`${dir}/none`, "ann");
    strictEqual(missing.kind === "open-failed" && missing.missing, true);
    strictEqual(missing.kind === "open-failed" && missing.osError?.code, 2);
    // A folder opens on Linux but cannot be read: nginx's pread() failure.
    if (Deno.build.os !== "windows") {
      const folder = await lookupUser(dir, "ann");
      strictEqual(folder.kind, "read-failed");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
