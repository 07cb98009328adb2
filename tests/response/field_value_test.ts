/**
 * Field values built from a configuration's variables: a client's decoded
 * line break in `$uri` never splits the response nor ends it in a 500, for
 * every place the gateway writes such a value into a redirect or a cookie.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  escapeControls,
  redirectLocation,
} from "../../src/response/field_value.ts";
import { startSideBySide } from "../access/_side_by_side.ts";
import { rawRequest, startUpstream } from "../_utils.ts";

Deno.test("escapeControls() escapes every control byte but a tab", () => {
  for (let c = 0; c < 0x80; c++) {
    const char = String.fromCharCode(c);
    const control = (c < 0x20 && c !== 0x09) || c === 0x7f;
    strictEqual(
      escapeControls(`a${char}b`),
      control
        ? `a%${c.toString(16).toUpperCase().padStart(2, "0")}b`
        : `a${char}b`,
      `0x${c.toString(16)}`,
    );
  }
  strictEqual(escapeControls("é\u2028"), "é\u2028");
});

Deno.test("redirectLocation() makes a path absolute and the field writable", () => {
  const cases: [string, string][] = [
    ["/new/x?a=1", "http://h:81/new/x?a=1"],
    ["https://x.test/a", "https://x.test/a"],
    ["/a\r\nSet-Cookie: x=1", "http://h:81/a%0D%0ASet-Cookie: x=1"],
    ["/é", "http://h:81/\xc3\xa9"],
    ["/€\0", "http://h:81/\xe2\x82\xac%00"],
  ];
  for (const [target, location] of cases) {
    strictEqual(redirectLocation(target, "http://h:81"), location, target);
    // What `Headers` takes: the value as it is (no throw, nothing cut).
    strictEqual(new Headers({ location }).get("location"), location);
  }
});

Deno.test("a decoded line break in $uri is escaped in every redirect and cookie the gateway builds", async (t) => {
  await using up = startUpstream(() =>
    new Response("", {
      status: 302,
      headers: {
        location: "http://up.test/app/x",
        "set-cookie": "s=1; Path=/app/",
      },
    })
  );
  await using both = await startSideBySide({
    server: `
    location /ret/ { return 302 http://x.test$uri; }
    location /ep/ { error_page 404 =302 http://x.test$uri; }
    location /pr/ {
      proxy_pass http://127.0.0.1:${up.port}/;
      proxy_redirect http://up.test/app/ http://x.test$uri/;
      proxy_cookie_path /app/ $uri;
    }`,
  });
  const injected = "a%0D%0AX-Added:%20injected";
  // [path, the Location the gateway sends]
  const cases: [string, string][] = [
    [`/ret/${injected}`, "http://x.test/ret/a%0D%0AX-Added: injected"],
    [`/ep/${injected}`, "http://x.test/ep/a%0D%0AX-Added: injected"],
    [`/pr/${injected}`, "http://x.test/pr/a%0D%0AX-Added: injected/x"],
  ];
  for (const [path, location] of cases) {
    await t.step(path, async () => {
      const { ours, theirs } = await both.exchange(
        `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
      );
      deepStrictEqual(
        [ours.status, ours.fields.filter((f) => !f.startsWith("content-"))],
        ["HTTP/1.1 302", [`location: ${location}`]],
      );
      deepStrictEqual(
        ours.errors.filter((l) => l.includes("[alert]")),
        [],
      );
      // NAMED DIFFERENCE "field-line-break": nginx copies the decoded CR LF
      // into the field, so the client chose a header of nginx's response.
      strictEqual(theirs.fields.includes("x-added: injected"), true);
    });
  }
  await t.step("proxy_cookie_path", async () => {
    const raw = await rawRequest(
      both.port,
      `GET /pr/${injected} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
    );
    const head = raw.split("\r\n\r\n")[0]!.split("\r\n");
    deepStrictEqual(
      head.filter((l) => /^(set-cookie|x-added):/i.test(l)),
      ["set-cookie: s=1; Path=/pr/a%0D%0AX-Added: injected"],
    );
  });
});
