import { strictEqual } from "node:assert/strict";
import { isRefusedWindowsName } from "../../src/static/windows_names.ts";

Deno.test("isRefusedWindowsName() refuses what could open something else, and serves dot-files", async (t) => {
  const cases: [string, boolean][] = [
    ["/index.html", false],
    ["/.env", false],
    ["/.well-known/security.txt", false],
    ["/assets/.vite/manifest.json", false],
    ["\\assets\\app.js", false],
    ["/index.html::$DATA", true],
    ["/index.html:stream", true],
    ["/dir:$i30:$INDEX_ALLOCATION/x", true],
    ["/index.html.", true],
    ["/index.html ", true],
    ["/dir./x.js", true],
    ["/PROGRA~1/x", true],
    ["/INDEX~1.HTM", true],
    ["/con", true],
    ["/CON.txt", true],
    ["/assets/nul.js", true],
    ["/com1", true],
    ["/lpt9.log", true],
    ["/com¹", true],
    // Win32 strips the spaces before the dot: these open devices too.
    ["/con .txt", true],
    ["/assets/COM1  .js", true],
    ["/nul   ", true],
    ["/conin$", true],
    ["/CONOUT$.log", true],
    ["/clock$", true],
    ["/icon .png", false],
    ["/con_x.txt", false],
    ["/console.js", false],
    ["/auxiliary.css", false],
    ["/../x", false], // dots alone: resolved before, skipped as nginx does
  ];
  for (const [path, want] of cases) {
    await t.step(path, () => strictEqual(isRefusedWindowsName(path), want));
  }
});
