/** `task install --nginx-conf FILE`: the file is read at install time. */
import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { parseTaskArgs, runTask } from "../../src/windows/task_command.ts";
import { station } from "./_station.ts";

Deno.test("parseTaskArgs() passes --nginx-conf on to the task after reading it", async () => {
  await using s = station("stock");
  const task = parseTaskArgs(["install", "--dry-run", "--nginx-conf", s.conf]);
  deepStrictEqual(task.gatewayArgs, ["--nginx-conf", s.conf]);
  let out = "";
  const code = await runTask(task, {
    execPath: "C:\\gw\\station-gateway.exe",
    os: "linux",
    version: "0.0.0",
  }, {
    out: (text) => out += text,
    schtasks: () => Promise.resolve(0),
    writeFile: () => {},
  });
  strictEqual(code, 0);
  strictEqual(
    out.includes(`<Arguments>--nginx-conf ${s.conf}</Arguments>`),
    true,
    out,
  );
});

Deno.test("parseTaskArgs() refuses an nginx.conf the gateway would refuse at boot", async () => {
  await using s = station("emerg_auth", refusedAuth);
  throws(
    () => parseTaskArgs(["install", "--nginx-conf", s.conf]),
    /^TypeError: Cannot use nginx-conf ".*": "auth_request" is not supported: .* in .*nginx.conf:49$/,
  );
  throws(
    () => parseTaskArgs(["install", "--nginx-conf", "conf\\nginx.conf"]),
    /the task needs an absolute path/,
  );
  throws(
    () => parseTaskArgs(["install", "--print-config"]),
    /--print-config makes no sense in a task/,
  );
});

/** The station's auth lines turned into directives the gateway refuses. */
function refusedAuth(text: string): string {
  return text.replace('auth_basic "station";', "auth_request /auth;")
    .replace("auth_basic_user_file htpasswd;", "proxy_cookie_path / /x;");
}
