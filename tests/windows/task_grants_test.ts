/**
 * The scheduled task's account, its folder grants, its restarts for ever
 * and the Windows paths of `task install`: table tests of the commands and
 * the XML, read back with an XML reader.
 */
import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { parseTaskArgs, runTask } from "../../src/windows/task_command.ts";
import { splitWindowsArgs, taskXml } from "../../src/windows/scheduled_task.ts";
import { quoteWindowsArg } from "../../src/windows/command_line.ts";
import { at, parseXml, type XmlElement } from "../_xml.ts";
import { makeCertificate } from "../_tls.ts";
import { join, win32 } from "node:path";

const WIN = {
  execPath: "C:\\StationGateway\\station-gateway.exe",
  os: "windows",
  version: "1.0.0",
  cwd: "C:\\Users\\admin",
};

/** Runs a task command with recording seams; the XML as written. */
async function run(args: string[], context: Partial<typeof WIN> = {}) {
  const schtasks: string[][] = [];
  const icacls: string[][] = [];
  const files = new Map<string, Uint8Array>();
  const dirs: string[] = [];
  const err: string[] = [];
  const io = {
    out() {},
    err: (t: string) => void err.push(t),
    schtasks: (a: string[]) => (schtasks.push(a), Promise.resolve(0)),
    icacls: (a: string[]) => (icacls.push(a), Promise.resolve(0)),
    writeFile: (p: string, b: Uint8Array) => void files.set(p, b),
    readFile: (p: string) => files.get(p) ?? null,
    mkdir: (p: string) => void dirs.push(p),
  };
  const code = await runTask(parseTaskArgs(args), { ...WIN, ...context }, io);
  const [xmlPath, bytes] = [...files][0] ?? [];
  const xml = bytes
    ? parseXml(new TextDecoder("utf-16le").decode(bytes).replace(/^\uFEFF/, ""))
    : null;
  return { code, schtasks, icacls, files, dirs, err, xmlPath, xml, io };
}

const text = (xml: XmlElement | null, path: string) => at(xml!, path).text;

Deno.test("task install runs as LOCAL SERVICE by default, --user SYSTEM or a named account when asked", async () => {
  const cases: [string[], string, string, string | null, string[]][] = [
    // [--user …], UserId, RunLevel, LogonType, schtasks' account arguments
    [[], "S-1-5-19", "LeastPrivilege", null, []],
    [["--user", "SYSTEM"], "S-1-5-18", "HighestAvailable", null, []],
    [
      ["--user", "NT AUTHORITY\\SYSTEM"],
      "S-1-5-18",
      "HighestAvailable",
      null,
      [],
    ],
    [
      ["--user", "NT AUTHORITY\\LocalService"],
      "S-1-5-19",
      "LeastPrivilege",
      null,
      [],
    ],
    [["--user", "NETWORK SERVICE"], "S-1-5-20", "LeastPrivilege", null, []],
    [["--user", "ST\\kiosk"], "ST\\kiosk", "LeastPrivilege", "Password", [
      "/RU",
      "ST\\kiosk",
      "/RP",
      "*",
    ]],
  ];
  for (const [user, id, level, logon, account] of cases) {
    const r = await run(["install", ...user]);
    strictEqual(r.code, 0, user.join(" "));
    const principal = at(r.xml!, "Principals/Principal");
    strictEqual(text(principal, "UserId"), id, user.join(" "));
    strictEqual(text(principal, "RunLevel"), level, user.join(" "));
    strictEqual(
      principal.children.find((c) => c.name === "LogonType")?.text ?? null,
      logon,
    );
    deepStrictEqual(r.schtasks[0]!.slice(5, -1), account, user.join(" "));
  }
});

Deno.test("task install grants the account read on the app, config and executables' folders and write on the logs, before registering", async () => {
  const cases: [string, string[], string[][]][] = [
    ["the defaults", [], [
      ["C:\\StationGateway", "/grant", "*S-1-5-19:(OI)(CI)RX"],
      ["C:\\StationGateway\\html", "/grant", "*S-1-5-19:(OI)(CI)RX"],
      ["C:\\StationGateway\\logs", "/grant", "*S-1-5-19:(OI)(CI)M"],
      [
        "C:\\StationGateway\\client_body_temp",
        "/grant",
        "*S-1-5-19:(OI)(CI)M",
      ],
    ]],
    ["flags name other folders", [
      "--root",
      "D:/Apps/client",
      "--error-log",
      "E:\\Logs\\gw\\error.log",
      "--access-log",
      "off",
      "--user",
      "ST\\kiosk",
    ], [
      ["C:\\StationGateway", "/grant", "ST\\kiosk:(OI)(CI)RX"],
      ["D:\\Apps\\client", "/grant", "ST\\kiosk:(OI)(CI)RX"],
      ["E:\\Logs\\gw", "/grant", "ST\\kiosk:(OI)(CI)M"],
      [
        "C:\\StationGateway\\client_body_temp",
        "/grant",
        "ST\\kiosk:(OI)(CI)M",
      ],
    ]],
    ["a config file's folder", [
      "--config",
      "conf\\station.json",
    ], [
      ["C:\\StationGateway", "/grant", "*S-1-5-19:(OI)(CI)RX"],
      ["C:\\StationGateway\\conf", "/grant", "*S-1-5-19:(OI)(CI)RX"],
      ["C:\\StationGateway\\html", "/grant", "*S-1-5-19:(OI)(CI)RX"],
      ["C:\\StationGateway\\logs", "/grant", "*S-1-5-19:(OI)(CI)M"],
      [
        "C:\\StationGateway\\client_body_temp",
        "/grant",
        "*S-1-5-19:(OI)(CI)M",
      ],
    ]],
    ["SYSTEM needs none", ["--user", "SYSTEM"], []],
  ];
  for (const [name, args, grants] of cases) {
    const r = await run(["install", ...args]);
    strictEqual(r.code, 0, name);
    deepStrictEqual(r.icacls, grants, name);
    deepStrictEqual(
      r.dirs,
      grants.filter((g) => g[2]!.endsWith("M")).map((g) => g[0]),
      `${name}: the log folder exists before its grant`,
    );
  }
});

Deno.test("task remove takes back the grants the installed task's XML records, after deleting the task", async () => {
  const installed = await run([
    "install",
    "--root",
    "D:\\client app",
    "--error-log",
    "E:\\Logs\\error.log",
  ]);
  const order: string[] = [];
  const removed = await runTask(parseTaskArgs(["remove"]), WIN, {
    ...installed.io,
    schtasks: (a) => (order.push(`schtasks ${a[0]}`), Promise.resolve(0)),
    icacls: (a) => (order.push(`icacls ${a.join(" ")}`), Promise.resolve(0)),
  });
  strictEqual(removed, 0);
  deepStrictEqual(order, [
    "schtasks /Delete",
    "icacls C:\\StationGateway /remove:g *S-1-5-19",
    "icacls D:\\client app /remove:g *S-1-5-19",
    "icacls E:\\Logs /remove:g *S-1-5-19",
    "icacls C:\\StationGateway\\logs /remove:g *S-1-5-19",
    "icacls C:\\StationGateway\\client_body_temp /remove:g *S-1-5-19",
  ]);
  const orphan = await run(["remove"]);
  strictEqual(orphan.code, 0);
  deepStrictEqual(orphan.icacls, []);
  match(orphan.err.join(""), /grants must be removed by hand/);
});

Deno.test("task install --nginx-conf grants what every server and location reads and writes, and remove takes the same back", async () => {
  const t = await Deno.makeTempDir({ prefix: "task-grants-" });
  try {
    const p = join(t, "nginx");
    for (const d of ["conf", "shared", "secrets", "certs", "keys"]) {
      await Deno.mkdir(join(d === "conf" ? p : t, d), { recursive: true });
    }
    // The certificate is made with openssl, which the Windows lane lacks.
    const withTls = Deno.build.os !== "windows";
    const cert = withTls ? await makeCertificate(join(t, "certs")) : null;
    if (cert) await Deno.rename(cert.keyPath, join(t, "keys", "station.key"));
    await Deno.writeTextFile(join(t, "secrets", "htpasswd"), "ops:{PLAIN}x\n");
    await Deno.writeTextFile(
      join(t, "shared", "admin.conf"),
      "location /admin/ { return 204; }\n",
    );
    // nginx.conf paths with forward slashes, as stations write them (a
    // backslash starts an escape there).
    const tc = t.replaceAll("\\", "/");
    // The task runs on Windows: a POSIX test path reads as C:\… there.
    const w = (path: string) =>
      win32.resolve("C:\\StationGateway", path.replaceAll("/", "\\"));
    const base = "C:\\StationGateway";
    // What every case grants: the executables' and nginx.conf's folders
    // (read), the main logs' and the body temp folder (write).
    const common = (
      root: string | null,
      temp = `${base}\\client_body_temp`,
    ) => ({
      read: [base, w(`${p}/conf`), root ?? `${base}\\html`],
      write: [w(`${p}/logs`), temp],
    });
    const cases: [string, string, { read: string[]; write: string[] }][] = [
      // [case, the server blocks, the grants]
      [
        "two servers with different roots",
        `
        server { listen 80; root html; }
        server { listen 81; root ${tc}/site2; }`,
        {
          read: [...common(w(`${p}/html`)).read, w(`${tc}/site2`)],
          write: common(null).write,
        },
      ],
      [
        "an alias location",
        `
        server { listen 80; root html;
          location /admin/ { alias ${tc}/admin/; } }`,
        {
          read: [...common(w(`${p}/html`)).read, w(`${tc}/admin`)],
          write: common(null).write,
        },
      ],
      [
        "a location's access_log and error_log",
        `
        server { listen 80; root html;
          location /api/ {
            access_log ${tc}/api-access/api.log;
            error_log ${tc}/api-errors/error.log;
          } }`,
        {
          read: common(w(`${p}/html`)).read,
          write: [
            ...common(null).write,
            w(`${tc}/api-access`),
            w(`${tc}/api-errors`),
          ],
        },
      ],
      [
        "an include from another folder",
        `
        server { listen 80; root html; include ${tc}/shared/admin.conf; }`,
        {
          read: [...common(w(`${p}/html`)).read, w(`${tc}/shared`)],
          write: common(null).write,
        },
      ],
      [
        "auth_basic_user_file",
        `
        server { listen 80; root html;
          location /ops/ { auth_basic ops; auth_basic_user_file ${tc}/secrets/htpasswd; } }`,
        {
          read: [...common(w(`${p}/html`)).read, w(`${tc}/secrets`)],
          write: common(null).write,
        },
      ],
      [
        "a root with a variable: its constant head's folder",
        `
        server { listen 80; root html; }
        server { listen 81; root ${tc}/sites/$host; }`,
        {
          read: [...common(w(`${p}/html`)).read, w(`${tc}/sites`)],
          write: common(null).write,
        },
      ],
      [
        "client_body_temp_path",
        `
        client_body_temp_path ${tc}/body;
        server { listen 80; root html; location /api/ { proxy_pass http://127.0.0.1:8080; } }`,
        {
          read: common(w(`${p}/html`)).read,
          write: common(null, w(`${tc}/body`)).write,
        },
      ],
      [
        "a folder written is not granted read too",
        `
        server { listen 80; root ${tc}/rw; access_log ${tc}/rw/access.log; }`,
        {
          read: [base, w(`${p}/conf`)],
          write: [w(`${p}/logs`), w(`${tc}/rw`), `${base}\\client_body_temp`],
        },
      ],
    ];
    if (withTls) {
      cases.push(
        [
          "ssl_certificate and ssl_certificate_key",
          `
        server { listen 8443 ssl; root html;
          ssl_certificate ${cert!.certPath.replaceAll("\\", "/")};
          ssl_certificate_key ${tc}/keys/station.key; }`,
          {
            read: [
              ...common(w(`${p}/html`)).read,
              w(`${tc}/certs`),
              w(`${tc}/keys`),
            ],
            write: common(null).write,
          },
        ],
      );
    }
    for (const [name, servers, grants] of cases) {
      const conf = join(p, "conf", "nginx.conf");
      await Deno.writeTextFile(conf, `events {}\nhttp {\n${servers}\n}\n`);
      const installed = await run(["install", "--nginx-conf", conf]);
      strictEqual(installed.code, 0, `${name}: ${installed.err.join("")}`);
      deepStrictEqual(installed.icacls, [
        ...grants.read.map((f) => [f, "/grant", "*S-1-5-19:(OI)(CI)RX"]),
        ...grants.write.map((f) => [f, "/grant", "*S-1-5-19:(OI)(CI)M"]),
      ], name);
      const removed: string[] = [];
      strictEqual(
        await runTask(parseTaskArgs(["remove"]), WIN, {
          ...installed.io,
          icacls: (a) => (removed.push(a[0]!), Promise.resolve(0)),
        }),
        0,
        name,
      );
      deepStrictEqual(removed, [...grants.read, ...grants.write], name);
    }
    // A root that starts with a variable: no folder can be known; said.
    const conf = join(p, "conf", "nginx.conf");
    await Deno.writeTextFile(
      conf,
      "http { server { listen 80; root $arg_dir; } }\n",
    );
    const r = await run(["install", "--nginx-conf", conf]);
    strictEqual(r.code, 0);
    deepStrictEqual(r.icacls.map((a) => a[0]), [
      ...common(null).read,
      ...common(null).write,
    ]);
    match(r.err.join(""), /"\$arg_dir" starts with a variable: no folder/);
  } finally {
    await Deno.remove(t, { recursive: true });
  }
});

Deno.test("task install restarts the gateway every minute for ever: a repeating boot trigger with no Duration, IgnoreNew", async () => {
  const r = await run(["install"]);
  const boot = at(r.xml!, "Triggers/BootTrigger");
  // MS-TSCH triggerBaseType is a sequence: Enabled, StartBoundary,
  // EndBoundary, Repetition, ExecutionTimeLimit.
  deepStrictEqual(boot.children.map((c) => c.name), ["Enabled", "Repetition"]);
  strictEqual(text(boot, "Repetition/Interval"), "PT1M");
  strictEqual(text(boot, "Repetition/StopAtDurationEnd"), "false");
  strictEqual(
    at(boot, "Repetition").children.some((c) => c.name === "Duration"),
    false,
    "no Duration: the pattern repeats indefinitely (MS-TSCH repetitionType)",
  );
  strictEqual(text(r.xml, "Settings/MultipleInstancesPolicy"), "IgnoreNew");
  strictEqual(text(r.xml, "Settings/ExecutionTimeLimit"), "PT0S");
});

Deno.test("task install resolves Windows paths: relative, forward slashes, quoted, UNC", async () => {
  const cases: [string, string, string, string, string][] = [
    // --executable, cwd, Command, WorkingDirectory, XML file
    [
      "station-gateway.exe",
      "C:\\StationGateway",
      "C:\\StationGateway\\station-gateway.exe",
      "C:\\StationGateway",
      "C:\\StationGateway\\station-gateway-task.xml",
    ],
    [
      "bin\\station-gateway.exe",
      "D:\\Apps",
      "D:\\Apps\\bin\\station-gateway.exe",
      "D:\\Apps\\bin",
      "D:\\Apps\\bin\\station-gateway-task.xml",
    ],
    [
      "C:/StationGateway/station-gateway.exe",
      "D:\\",
      "C:\\StationGateway\\station-gateway.exe",
      "C:\\StationGateway",
      "C:\\StationGateway\\station-gateway-task.xml",
    ],
    [
      "C:/station-gateway.exe",
      "D:\\",
      "C:\\station-gateway.exe",
      "C:\\",
      "C:\\station-gateway-task.xml",
    ],
    [
      '"C:\\Station Gateway\\station-gateway.exe"',
      "D:\\",
      "C:\\Station Gateway\\station-gateway.exe",
      "C:\\Station Gateway",
      "C:\\Station Gateway\\station-gateway-task.xml",
    ],
    [
      "\\StationGateway\\station-gateway.exe",
      "E:\\x",
      "E:\\StationGateway\\station-gateway.exe",
      "E:\\StationGateway",
      "E:\\StationGateway\\station-gateway-task.xml",
    ],
    [
      "\\\\srv\\share\\gw\\station-gateway.exe",
      "C:\\",
      "\\\\srv\\share\\gw\\station-gateway.exe",
      "\\\\srv\\share\\gw",
      "\\\\srv\\share\\gw\\station-gateway-task.xml",
    ],
    [
      "//srv/share/station-gateway.exe",
      "C:\\",
      "\\\\srv\\share\\station-gateway.exe",
      "\\\\srv\\share\\",
      "\\\\srv\\share\\station-gateway-task.xml",
    ],
  ];
  for (const [exe, cwd, command, workdir, xmlPath] of cases) {
    // A share: SYSTEM, since LOCAL SERVICE cannot read one (next test).
    const user = exe.includes("srv") ? ["--user", "SYSTEM"] : [];
    const r = await run(["install", "--executable", exe, ...user], { cwd });
    strictEqual(r.code, 0, `${exe}: ${r.err.join("")}`);
    strictEqual(text(r.xml, "Actions/Exec/Command"), command, exe);
    strictEqual(text(r.xml, "Actions/Exec/WorkingDirectory"), workdir, exe);
    strictEqual(r.xmlPath, xmlPath, exe);
    strictEqual(r.schtasks[0]![2], xmlPath, exe);
  }
});

Deno.test("task install refuses an executable on a share for LOCAL SERVICE, which has no network identity", async () => {
  const r = await run(["install", "--executable", "\\\\srv\\share\\gw.exe"]);
  strictEqual(r.code, 1);
  match(r.err.join(""), /LOCAL SERVICE cannot read a network share/);
  strictEqual(r.schtasks.length + r.icacls.length + r.files.size, 0);
});

Deno.test("splitWindowsArgs() reads back what quoteWindowsArg() wrote", () => {
  const args = [
    "--root",
    "C:\\Station App\\html",
    'say "hi"',
    "C:\\dir\\",
    "C:\\dir with space\\",
    "",
    "a\\\\b",
    'tail\\"',
  ];
  deepStrictEqual(splitWindowsArgs(args.map(quoteWindowsArg).join(" ")), args);
  // And the XML keeps them: <Arguments> is this line.
  const xml = taskXml({
    name: "gw",
    executable: "C:\\gw.exe",
    args,
    user: "LOCAL SERVICE",
    atLogon: false,
    version: "1",
  });
  deepStrictEqual(
    splitWindowsArgs(at(parseXml(xml), "Actions/Exec/Arguments").text),
    args,
  );
});
