import { strictEqual } from "node:assert/strict";
import { isDosDeviceName, refusedRequestPath } from "../../src/runtime/mod.ts";

Deno.test("refusedRequestPath() refuses on Windows what nginx for Windows refuses, over the whole path", async (t) => {
  const root = "C:\\Station\\html";
  const cases: [string, number, boolean][] = [
    // The drive before the first slash is skipped (ngx_win32_check_filename's sw_start).
    [`${root}\\index.html`, root.length, false],
    [`${root}/assets/app.js`, root.length, false],
    [`${root}/.well-known/app.json`, root.length, false],
    [`${root}\\COM1`, root.length, true],
    [`${root}/com1.txt`, root.length, true],
    [`${root}/CONIN$`, root.length, true],
    [`${root}/aux/x.js`, root.length, true],
    [`${root}/LPT1 .log`, root.length, true],
    [`${root}/COM1.`, root.length, true],
    [`${root}/x.js `, root.length, true],
    [`${root}/index.html::$DATA`, root.length, true],
    [`${root}/INDEX~1.HTM`, root.length, true],
    [`${root}/../x`, root.length, false],
    // A root of variables: devices, streams and trailing dots anywhere.
    ["C:\\Station\\html\\COM1\\index.html", root.length + 5, true],
    ["C:\\sites\\nul.\\index.html", 9, true],
    // Short names before `from` are the configuration's.
    ["C:\\PROGRA~1\\Station\\html\\a.js", 24, false],
    ["C:\\PROGRA~1\\Station\\html\\A~1.JS", 24, true],
    // A name crossing `from` is the request's.
    ["C:\\html\\INDEX~1.HTM", 10, true],
    ["C:\\html\\a\0b", 7, true],
  ];
  for (const [path, from, want] of cases) {
    await t.step(
      JSON.stringify(path),
      () => strictEqual(refusedRequestPath(path, "windows", from), want),
    );
  }
});

Deno.test("refusedRequestPath() refuses only a NUL elsewhere than Windows", () => {
  strictEqual(refusedRequestPath("/srv/html/COM1", "linux", 9), false);
  strictEqual(refusedRequestPath("/srv/html/a.txt::$DATA", "linux", 9), false);
  strictEqual(refusedRequestPath("/srv/html/a\0", "linux", 9), true);
});

Deno.test("isDosDeviceName() takes the name before its first dot, spaces stripped, in any case", async (t) => {
  const cases: [string, boolean][] = [
    ["con", true],
    ["PRN", true],
    ["Aux.js", true],
    ["nul   ", true],
    ["com0", true],
    ["COM9.log", true],
    ["lpt¹", true],
    ["com²", true],
    ["conin$", true],
    ["CONOUT$.txt", true],
    ["clock$", true],
    ["com10", false],
    ["comx", false],
    ["conout", false],
    ["icon", false],
    [".con", false],
    ["", false],
  ];
  for (const [name, want] of cases) {
    await t.step(name, () => strictEqual(isDosDeviceName(name), want));
  }
});
