import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import {
  encodeUtf16Le,
  quoteWindowsArg,
  SCHTASKS,
  SYSTEM_SID,
  type TaskDefinition,
  taskXml,
  windowsDirname,
} from "../../src/windows/scheduled_task.ts";
import { at, parseXml } from "../_xml.ts";

const BASE: TaskDefinition = {
  name: "station-gateway",
  executable: "C:\\Program Files\\Station Gateway\\station-gateway.exe",
  args: [
    "--upstream",
    "http://10.20.0.5:8080",
    "--root",
    "C:\\Program Files\\Station Gateway\\app & more",
  ],
  user: "SYSTEM",
  atLogon: false,
  version: "1.2.3",
};

/** CommandLineToArgvW's rules, to check quoteWindowsArg round-trips. */
function splitWindowsCommandLine(line: string): string[] {
  const args: string[] = [];
  let current = "";
  let quoted = false;
  let any = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (ch === "\\") {
      let n = 0;
      while (line[i] === "\\") {
        n++;
        i++;
      }
      if (line[i] === '"') {
        current += "\\".repeat(Math.floor(n / 2));
        if (n % 2 === 1) current += '"';
        else quoted = !quoted;
        any = true;
      } else {
        current += "\\".repeat(n);
        i--;
      }
    } else if (ch === '"') {
      quoted = !quoted;
      any = true;
    } else if ((ch === " " || ch === "\t") && !quoted) {
      if (current !== "" || any) args.push(current);
      current = "";
      any = false;
    } else {
      current += ch;
    }
  }
  if (current !== "" || any) args.push(current);
  return args;
}

Deno.test("taskXml() sets every setting an unattended gateway needs", () => {
  const task = parseXml(taskXml(BASE));
  strictEqual(task.name, "Task");
  strictEqual(
    task.attributes.xmlns,
    "http://schemas.microsoft.com/windows/2004/02/mit/task",
  );
  const settings = at(task, "Settings");
  const setting = (path: string) => at(settings, path).text;
  strictEqual(setting("ExecutionTimeLimit"), "PT0S");
  strictEqual(setting("MultipleInstancesPolicy"), "IgnoreNew");
  strictEqual(setting("DisallowStartIfOnBatteries"), "false");
  strictEqual(setting("StopIfGoingOnBatteries"), "false");
  strictEqual(setting("RestartOnFailure/Interval"), "PT1M");
  strictEqual(Number(setting("RestartOnFailure/Count")) >= 100, true);
  strictEqual(setting("StartWhenAvailable"), "true");
  strictEqual(setting("Enabled"), "true");
  strictEqual(setting("IdleSettings/StopOnIdleEnd"), "false");
  strictEqual(at(task, "Triggers/BootTrigger/Enabled").text, "true");
  deepStrictEqual(at(task, "Triggers").children.map((c) => c.name), [
    "BootTrigger",
  ]);
  strictEqual(at(task, "Principals/Principal/UserId").text, SYSTEM_SID);
  const exec = at(task, "Actions/Exec");
  strictEqual(at(exec, "Command").text, BASE.executable);
  strictEqual(
    at(exec, "WorkingDirectory").text,
    "C:\\Program Files\\Station Gateway",
  );
  deepStrictEqual(
    splitWindowsCommandLine(at(exec, "Arguments").text),
    BASE.args,
  );
  strictEqual(at(task, "RegistrationInfo/URI").text, "\\station-gateway");
});

Deno.test("taskXml() adds a logon trigger and a named account when asked", () => {
  const task = parseXml(
    taskXml({ ...BASE, atLogon: true, user: "STATION7\\kiosk", args: [] }),
  );
  deepStrictEqual(at(task, "Triggers").children.map((c) => c.name), [
    "BootTrigger",
    "LogonTrigger",
  ]);
  strictEqual(at(task, "Principals/Principal/UserId").text, "STATION7\\kiosk");
  strictEqual(at(task, "Principals/Principal/LogonType").text, "Password");
  throws(() => at(task, "Actions/Exec/Arguments"), /No <Arguments>/);
});

Deno.test("quoteWindowsArg() round-trips through CommandLineToArgvW's rules", async (t) => {
  const cases = [
    "plain",
    "C:\\Station Gateway\\html",
    "C:\\dir\\",
    "C:\\dir with space\\",
    'say "hi"',
    'back\\"slash',
    "",
    "tab\there",
    "http://10.0.0.5:8080 backup",
    "\\\\server\\share\\x",
  ];
  for (const arg of cases) {
    await t.step(JSON.stringify(arg), () => {
      deepStrictEqual(
        splitWindowsCommandLine(`x.exe ${quoteWindowsArg(arg)}`),
        ["x.exe", arg],
      );
    });
  }
});

Deno.test("encodeUtf16Le() writes a BOM and little-endian units", () => {
  deepStrictEqual([...encodeUtf16Le("A€")], [
    0xff,
    0xfe,
    0x41,
    0x00,
    0xac,
    0x20,
  ]);
});

Deno.test("SCHTASKS builds the create, delete and query command lines", () => {
  deepStrictEqual(SCHTASKS.create("gw", "C:\\x\\gw-task.xml", "SYSTEM"), [
    "/Create",
    "/XML",
    "C:\\x\\gw-task.xml",
    "/TN",
    "gw",
    "/F",
  ]);
  deepStrictEqual(SCHTASKS.create("gw", "C:\\x\\t.xml", "me"), [
    "/Create",
    "/XML",
    "C:\\x\\t.xml",
    "/TN",
    "gw",
    "/RU",
    "me",
    "/RP",
    "*",
    "/F",
  ]);
  deepStrictEqual(SCHTASKS.remove("gw"), ["/Delete", "/TN", "gw", "/F"]);
  deepStrictEqual(SCHTASKS.status("gw"), [
    "/Query",
    "/TN",
    "gw",
    "/V",
    "/FO",
    "LIST",
  ]);
  strictEqual(windowsDirname("C:\\a\\b.exe"), "C:\\a");
  strictEqual(windowsDirname("C:\\b.exe"), "C:\\");
});
