/**
 * Prints the README's list of nginx directives and what the gateway does
 * with each (`deno run scripts/directives.ts`), to paste between the
 * README's `directives` markers after the directive table changes: one line
 * a group, in a `deno-fmt-ignore` range so that it stays as printed
 * (tests/nginx_conf/support_test.ts compares it to the letter).
 *
 * @module
 */

import { supportList } from "../src/nginx_conf/support.ts";

Deno.stdout.writeSync(new TextEncoder().encode(supportList()));
