/**
 * The Windows scheduled task that starts the gateway on a station PC: its
 * Task Scheduler XML (MS-TSCH `taskType`) and the `schtasks` command lines.
 * Pure: building text only; running `schtasks` is `task_command.ts`.
 *
 * The settings that matter for a gateway nobody watches: start at boot, run
 * whether a user is logged on or not, as LOCAL SERVICE unless told
 * otherwise, no 72-hour `ExecutionTimeLimit` (the default kills
 * long-running programs: vercel-labs/portless#378), started again every
 * minute for ever (below), never a second instance, no battery conditions,
 * and the executable's folder as the working directory.
 *
 * Why it never gives up: `RestartOnFailure` stops after its `Count` (999 at
 * one minute is about 16.6 hours, a weekend of an old nginx holding the
 * port is longer). The boot trigger also repeats every minute with no
 * `Duration`, which MS-TSCH `repetitionType` defines as repeating
 * indefinitely; while the gateway runs, `MultipleInstancesPolicy`
 * `IgnoreNew` drops each of those starts, so a start happens only when no
 * gateway runs. (`triggerBaseType` is a sequence: `Enabled` comes before
 * `Repetition`, or `schtasks /XML` refuses the file.)
 *
 * @module
 */

import { win32 } from "node:path";
import { quoteWindowsArg } from "./command_line.ts";

export { quoteWindowsArg, splitWindowsArgs } from "./command_line.ts";

/** What the task runs and how. */
export interface TaskDefinition {
  /** The task's name in Task Scheduler. */
  name: string;
  /** The gateway executable, absolute Windows path. */
  executable: string;
  /** Arguments for the gateway. */
  args: string[];
  /**
   * The account: `LOCAL SERVICE` (the default), `NETWORK SERVICE`,
   * `SYSTEM`, or `DOMAIN\user` / `user`, which needs that account's
   * password when registering.
   */
  user: string;
  /** Also start at user logon (besides at boot). */
  atLogon: boolean;
  /** The gateway's version, for the description. */
  version: string;
}

/** The SID of LocalSystem, which Task Scheduler accepts as `UserId`. */
export const SYSTEM_SID = "S-1-5-18";

/** The SID of LOCAL SERVICE, the task's default account. */
export const LOCAL_SERVICE_SID = "S-1-5-19";

/** Windows' built-in service accounts: no password, a well-known SID. */
const SERVICE_ACCOUNTS: [RegExp, string][] = [
  [/^(nt authority\\)?(local ?)?system$/i, SYSTEM_SID],
  [/^(nt authority\\)?local ?service$/i, LOCAL_SERVICE_SID],
  [/^(nt authority\\)?network ?service$/i, "S-1-5-20"],
];

/**
 * The SID of a built-in service account (`SYSTEM`, `LOCAL SERVICE`,
 * `NETWORK SERVICE`, with or without `NT AUTHORITY\`, or the SID itself).
 *
 * @param user The account as given.
 * @returns Its SID, or null for a named account.
 *
 * @example Usage
 * ```ts
 * import { serviceAccountSid } from "./scheduled_task.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(serviceAccountSid("NT AUTHORITY\\LocalService"), "S-1-5-19");
 * strictEqual(serviceAccountSid("ST\\kiosk"), null);
 * ```
 */
export function serviceAccountSid(user: string): string | null {
  for (const [pattern, sid] of SERVICE_ACCOUNTS) {
    if (pattern.test(user.trim()) || user.trim() === sid) return sid;
  }
  return null;
}

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
 * The folder of an absolute Windows path (`C:\a\b.exe` → `C:\a`,
 * `C:\b.exe` → `C:\`, `\\srv\share\b.exe` → `\\srv\share\`).
 *
 * @param path An absolute Windows path.
 * @returns Its folder.
 */
export function windowsDirname(path: string): string {
  return win32.dirname(path);
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
  const sid = serviceAccountSid(task.user);
  // SYSTEM keeps the highest level it has; the other service accounts and
  // named ones run with their own rights only.
  const principal = sid !== null
    ? `<UserId>${sid}</UserId>\n      <RunLevel>${
      sid === SYSTEM_SID ? "HighestAvailable" : "LeastPrivilege"
    }</RunLevel>`
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
      <Repetition>
        <Interval>PT1M</Interval>
        <StopAtDurationEnd>false</StopAtDurationEnd>
      </Repetition>
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
    const account = serviceAccountSid(user) !== null
      ? []
      : ["/RU", user, "/RP", "*"];
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
