/**
 * The Windows scheduled task that starts the gateway on a station PC: its
 * Task Scheduler XML (MS-TSCH `taskType`) and the `schtasks` command lines.
 * Pure: building text only; running `schtasks` is `task_command.ts`.
 *
 * The settings that matter for a gateway nobody watches: start at boot, run
 * whether a user is logged on or not, no 72-hour `ExecutionTimeLimit` (the
 * default kills long-running programs: vercel-labs/portless#378), restart
 * on failure every minute, never a second instance, no battery conditions,
 * and the executable's folder as the working directory.
 *
 * @module
 */

/** What the task runs and how. */
export interface TaskDefinition {
  /** The task's name in Task Scheduler. */
  name: string;
  /** The gateway executable, absolute Windows path. */
  executable: string;
  /** Arguments for the gateway. */
  args: string[];
  /**
   * The account: `SYSTEM` (the default), or `DOMAIN\user` / `user`, which
   * needs that account's password when registering.
   */
  user: string;
  /** Also start at user logon (besides at boot). */
  atLogon: boolean;
  /** The gateway's version, for the description. */
  version: string;
}

/** The SID of LocalSystem, which Task Scheduler accepts as `UserId`. */
export const SYSTEM_SID = "S-1-5-18";

/**
 * Escapes text for XML content and attribute values.
 *
 * @param text The text.
 * @returns The escaped text.
 *
 * @example Usage
 * ```ts
 * import { escapeXml } from "./scheduled_task.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(escapeXml(`a<b & "c"`), "a&lt;b &amp; &quot;c&quot;");
 * ```
 */
export function escapeXml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) =>
      ({
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        '"': "&quot;",
        "'": "&apos;",
      })[
        c
      ]!,
  );
}

/**
 * Quotes one argument for a Windows command line so that
 * `CommandLineToArgvW` (the C runtime's parser) gives it back unchanged:
 * quotes around anything with spaces, tabs or quotes, backslashes doubled
 * only before a quote.
 *
 * @param arg The argument.
 * @returns The quoted argument.
 *
 * @example Usage
 * ```ts
 * import { quoteWindowsArg } from "./scheduled_task.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(quoteWindowsArg("C:\\Station App\\html"), '"C:\\Station App\\html"');
 * strictEqual(quoteWindowsArg("C:\\dir\\"), "C:\\dir\\");
 * ```
 */
export function quoteWindowsArg(arg: string): string {
  if (arg !== "" && !/[ \t\n\v"]/.test(arg)) return arg;
  let out = '"';
  let slashes = 0;
  for (const ch of arg) {
    if (ch === "\\") {
      slashes++;
      continue;
    }
    if (ch === '"') {
      out += "\\".repeat(slashes * 2 + 1) + '"';
    } else {
      out += "\\".repeat(slashes) + ch;
    }
    slashes = 0;
  }
  return `${out}${"\\".repeat(slashes * 2)}"`;
}

/**
 * The folder of a Windows path (`C:\a\b.exe` → `C:\a`).
 *
 * @param path A Windows path.
 * @returns Its folder.
 */
export function windowsDirname(path: string): string {
  const i = path.lastIndexOf("\\");
  return i <= 2 ? path.slice(0, 3) : path.slice(0, i);
}

function isSystem(user: string): boolean {
  return /^(nt authority\\)?system$/i.test(user) || user === SYSTEM_SID;
}

/**
 * Builds the task's XML.
 *
 * @param task What to run.
 * @returns The XML document (declared UTF-16; write it with
 * {@linkcode encodeUtf16Le}).
 *
 * @example Usage
 * ```ts
 * import { taskXml } from "./scheduled_task.ts";
 * import { match } from "node:assert/strict";
 *
 * const xml = taskXml({
 *   name: "station-gateway",
 *   executable: "C:\\Station\\station-gateway.exe",
 *   args: [],
 *   user: "SYSTEM",
 *   atLogon: false,
 *   version: "1.0.0",
 * });
 * match(xml, /<ExecutionTimeLimit>PT0S<\/ExecutionTimeLimit>/);
 * ```
 */
export function taskXml(task: TaskDefinition): string {
  const system = isSystem(task.user);
  const principal = system
    ? `<UserId>${SYSTEM_SID}</UserId>\n      <RunLevel>HighestAvailable</RunLevel>`
    : `<UserId>${
      escapeXml(task.user)
    }</UserId>\n      <LogonType>Password</LogonType>\n      <RunLevel>LeastPrivilege</RunLevel>`;
  const logon = task.atLogon
    ? `\n    <LogonTrigger>\n      <Enabled>true</Enabled>\n    </LogonTrigger>`
    : "";
  const args = task.args.map(quoteWindowsArg).join(" ");
  return `<?xml version="1.0" encoding="UTF-16"?>
<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">
  <RegistrationInfo>
    <Description>station-gateway ${
    escapeXml(task.version)
  }: serves the station client app and forwards /api/ to the upstream.</Description>
    <URI>\\${escapeXml(task.name)}</URI>
  </RegistrationInfo>
  <Triggers>
    <BootTrigger>
      <Enabled>true</Enabled>
    </BootTrigger>${logon}
  </Triggers>
  <Principals>
    <Principal id="Author">
      ${principal}
    </Principal>
  </Principals>
  <Settings>
    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>
    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>
    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>
    <AllowHardTerminate>true</AllowHardTerminate>
    <StartWhenAvailable>true</StartWhenAvailable>
    <RunOnlyIfNetworkAvailable>false</RunOnlyIfNetworkAvailable>
    <IdleSettings>
      <StopOnIdleEnd>false</StopOnIdleEnd>
      <RestartOnIdle>false</RestartOnIdle>
    </IdleSettings>
    <AllowStartOnDemand>true</AllowStartOnDemand>
    <Enabled>true</Enabled>
    <Hidden>false</Hidden>
    <RunOnlyIfIdle>false</RunOnlyIfIdle>
    <WakeToRun>false</WakeToRun>
    <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>
    <Priority>5</Priority>
    <RestartOnFailure>
      <Interval>PT1M</Interval>
      <Count>999</Count>
    </RestartOnFailure>
  </Settings>
  <Actions Context="Author">
    <Exec>
      <Command>${escapeXml(task.executable)}</Command>${
    args === "" ? "" : `\n      <Arguments>${escapeXml(args)}</Arguments>`
  }
      <WorkingDirectory>${
    escapeXml(windowsDirname(task.executable))
  }</WorkingDirectory>
    </Exec>
  </Actions>
</Task>
`;
}

/**
 * Encodes text as UTF-16 little-endian with a byte-order mark, the encoding
 * Task Scheduler's own exports use and `schtasks /XML` reads.
 *
 * @param text The text.
 * @returns The bytes.
 */
export function encodeUtf16Le(text: string): Uint8Array {
  const out = new Uint8Array(2 + text.length * 2);
  out[0] = 0xff;
  out[1] = 0xfe;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    out[2 + i * 2] = code & 0xff;
    out[3 + i * 2] = code >> 8;
  }
  return out;
}

/** The `schtasks` invocations for each subcommand. */
export const SCHTASKS = {
  /**
   * Registers (or replaces) the task from an XML file.
   *
   * @param name The task name.
   * @param xmlPath The XML file.
   * @param user The account; a named one is asked for its password.
   * @returns The arguments for `schtasks`.
   */
  create(name: string, xmlPath: string, user: string): string[] {
    const account = isSystem(user) ? [] : ["/RU", user, "/RP", "*"];
    return ["/Create", "/XML", xmlPath, "/TN", name, ...account, "/F"];
  },
  /**
   * Deletes the task.
   *
   * @param name The task name.
   * @returns The arguments for `schtasks`.
   */
  remove(name: string): string[] {
    return ["/Delete", "/TN", name, "/F"];
  },
  /**
   * Shows the task's state.
   *
   * @param name The task name.
   * @returns The arguments for `schtasks`.
   */
  status(name: string): string[] {
    return ["/Query", "/TN", name, "/V", "/FO", "LIST"];
  },
} as const;
