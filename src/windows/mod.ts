/**
 * Windows: the scheduled task that starts the gateway, and the
 * `task` command that installs, inspects and removes it.
 *
 * @module
 */

export { taskMain } from "./task_main.ts";
