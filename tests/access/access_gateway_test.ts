/**
 * The access phases wired into the engine, beside nginx 1.22 from the same
 * nginx.conf: allow/deny, auth_basic (nested `off`, relative file, missing
 * and unreadable files), satisfy, for every location a request ends up in
 * (try_files, index, error_page, named locations), with error_page and
 * `add_header … always` on the refusals; statuses, fields, bodies, error
 * and access lines compared.
 */
import { deepStrictEqual } from "node:assert/strict";
import { basic, startSideBySide } from "./_side_by_side.ts";

const USERS = [
  "# station users",
  "ann:{PLAIN}pw-ann",
  "bob:$apr1$abcdefgh$FBwExRW4dCc8aL.OvjpIE1",
  "malformed line",
  "",
].join("\n");

function get(path: string, more = ""): string {
  return `GET ${path} HTTP/1.1\r\nHost: localhost\r\nUser-Agent: t\r\n${more}Connection: close\r\n\r\n`;
}

Deno.test("the access phase answers and logs as nginx 1.22 in every location a request reaches", async () => {
  const dir = await Deno.makeTempDir({ prefix: "access-users-" });
  await Deno.writeTextFile(`${dir}/users`, USERS);
  await Deno.mkdir(`${dir}/folder`);
  try {
    await using both = await startSideBySide({
      server: `
    root $HTML;
    location /deny/ { deny all; try_files /none =204; }
    location /ret/ { deny all; return 200 "returned\\n"; }
    location /auth/ {
      auth_basic "Station";
      auth_basic_user_file ${dir}/users;
      try_files /none =204;
      location /auth/off/ { auth_basic off; try_files /none =204; }
    }
    location /realm/ {
      auth_basic "Zone $http_x_zone";
      auth_basic_user_file ${dir}/users;
      try_files /none =204;
    }
    location /missing/ {
      auth_basic "S"; auth_basic_user_file ${dir}/none; try_files /none =204;
    }
    location /unreadable/ {
      auth_basic "S"; auth_basic_user_file ${dir}/folder; try_files /none =204;
    }
    location /any/ {
      satisfy any; deny all;
      auth_basic "S"; auth_basic_user_file ${dir}/users;
      try_files /none =204;
    }
    location /anyok/ {
      satisfy any; allow 127.0.0.1; deny all;
      auth_basic "S"; auth_basic_user_file ${dir}/users;
      try_files /none =204;
    }
    location /all/ {
      allow 127.0.0.1; deny all;
      auth_basic "S"; auth_basic_user_file ${dir}/users;
      try_files /none =204;
    }
    location /tf/ { try_files /none /denied/x; }
    location /denied/ { deny all; }
    location /idx/ { index page.html; }
    location = /idx/page.html { deny all; }
    location /page/ {
      auth_basic "S"; auth_basic_user_file ${dir}/users;
      error_page 401 /401.html;
      add_header X-Added yes always;
      try_files /none =204;
    }
    location = /401.html { }
    location /named/ { deny all; error_page 403 = @fallback; }
    location @fallback { return 200 "fallback\\n"; }
    location /pagedenied/ {
      auth_basic "S"; auth_basic_user_file ${dir}/users;
      error_page 401 /closed/401.html;
    }
    location /closed/ { deny all; }
    location /ext/ {
      auth_basic "S"; auth_basic_user_file ${dir}/users;
      error_page 401 http://login.example/?from=ext;
    }
`,
      files: {
        "401.html": "custom 401\n",
        "idx/page.html": "page\n",
        "closed/401.html": "closed\n",
      },
    });
    const cases: [string, string][] = [
      ["/deny/", ""],
      ["/ret/", ""],
      ["/auth/", ""],
      ["/auth/", "Authorization: Bearer x\r\n"],
      ["/auth/", basic("ann", "pw-ann")],
      ["/auth/", basic("ann", "wrong")],
      ["/auth/", basic("bob", "password")],
      ["/auth/", basic("bob", "wrong")],
      ["/auth/", basic("nobody", "x")],
      ["/auth/", basic("malformed line", "x")],
      ["/auth/off/", ""],
      ["/realm/", "X-Zone: east\r\n"],
      ["/missing/", basic("ann", "pw-ann")],
      ["/missing/", ""],
      ["/unreadable/", basic("ann", "pw-ann")],
      ["/any/", ""],
      ["/any/", basic("ann", "pw-ann")],
      ["/any/", basic("ann", "wrong")],
      ["/anyok/", ""],
      ["/all/", ""],
      ["/all/", basic("ann", "pw-ann")],
      ["/tf/", ""],
      ["/idx/", ""],
      ["/page/", ""],
      ["/page/", basic("ann", "pw-ann")],
      ["/named/", ""],
      ["/pagedenied/", ""],
      ["/ext/", ""],
    ];
    for (const [path, more] of cases) {
      const { ours, theirs } = await both.exchange(get(path, more));
      deepStrictEqual(ours, theirs, `${path} ${more.trim()}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a relative auth_basic_user_file is read from nginx.conf's folder, and an edit takes effect at once, as with nginx 1.22", async () => {
  await using both = await startSideBySide({
    server: `
    location /rel/ {
      auth_basic "S";
      auth_basic_user_file htpasswd;
      try_files /none =204;
    }
    location /user/ { return 200 "user=$remote_user\n"; }
`,
  });
  const check = async (more: string, label: string) => {
    const { ours, theirs } = await both.exchange(get("/rel/", more));
    deepStrictEqual(ours, theirs, label);
    return ours.status;
  };
  // Missing: nginx's open() line and 403.
  await check(basic("ann", "one"), "missing");
  await both.writeConfFile("htpasswd", "ann:{PLAIN}one\n");
  deepStrictEqual(await check(basic("ann", "one"), "written"), "HTTP/1.1 204");
  // The same size, written at once: the new password holds, the old fails.
  await both.writeConfFile("htpasswd", "ann:{PLAIN}two\n");
  deepStrictEqual(await check(basic("ann", "one"), "old"), "HTTP/1.1 401");
  deepStrictEqual(await check(basic("ann", "two"), "new"), "HTTP/1.1 204");
  const { ours, theirs } = await both.exchange(
    get("/user/", basic("ann", "x")),
  );
  deepStrictEqual(ours, theirs, "$remote_user");
  deepStrictEqual(ours.body, "user=ann\n");
});
