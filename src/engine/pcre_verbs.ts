/**
 * PCRE2's `(*…)` items as parse_regex() reads them: the option settings a
 * pattern may start with, verbs (`(*ACCEPT)`, `(*MARK:NAME)`) and alpha
 * assertions (`(*pla:…)`), with PCRE2's refusals of the ones it does not
 * know or that are malformed.
 *
 * @module
 */

import type { Cursor } from "./pcre_escapes.ts";
import { fail } from "./pcre_tree.ts";

/** The option settings PCRE2 reads at the start of a pattern (pso_list). */
const START_OPTION =
  /^\(\*(?:UTF|UCP|NOTEMPTY|NOTEMPTY_ATSTART|NO_AUTO_POSSESS|NO_DOTSTAR_ANCHOR|NO_JIT|NO_START_OPT|CR|LF|CRLF|ANY|NUL|ANYCRLF|BSR_ANYCRLF|BSR_UNICODE|(?:LIMIT_MATCH|LIMIT_HEAP|LIMIT_DEPTH|LIMIT_RECURSION)=\d+)\)/;
/** PCRE2's verbs (`(*:NAME)` is `(*MARK:NAME)`). */
const VERBS = new Set([
  "",
  "MARK",
  "ACCEPT",
  "F",
  "FAIL",
  "COMMIT",
  "PRUNE",
  "SKIP",
  "THEN",
]);
/**
 * PCRE2's alpha assertions and what each is: a lookaround, an atomic
 * group, a non-atomic lookaround (`*=`), a script run (`group`).
 */
const ALPHA_ASSERTIONS = new Map<string, AlphaForm>([
  ["pla", "="],
  ["positive_lookahead", "="],
  ["plb", "<="],
  ["positive_lookbehind", "<="],
  ["nla", "!"],
  ["negative_lookahead", "!"],
  ["nlb", "<!"],
  ["negative_lookbehind", "<!"],
  ["napla", "*="],
  ["non_atomic_positive_lookahead", "*="],
  ["naplb", "*<="],
  ["non_atomic_positive_lookbehind", "*<="],
  ["atomic", ">"],
  ["sr", "group"],
  ["asr", "group"],
  ["script_run", "group"],
  ["atomic_script_run", "group"],
]);

/** What an alpha assertion is (see `ALPHA_ASSERTIONS`). */
export type AlphaForm = "=" | "!" | "<=" | "<!" | ">" | "*=" | "*<=" | "group";

/** A `(*…)` item read: a verb, or an alpha assertion whose body follows. */
export type VerbRead =
  | { kind: "verb"; name: string }
  | { kind: "alpha"; form: AlphaForm };

/**
 * Whether a pattern starts with one of PCRE2's option settings
 * (`(*UTF)`, `(*LIMIT_MATCH=10)`).
 *
 * @param s The pattern.
 * @returns Whether it does.
 */
export function startsWithOption(s: string): boolean {
  return START_OPTION.test(s);
}

/**
 * Reads `(*…` from its `(` at `start`: a verb to its `)`, or an alpha
 * assertion's name and `:` (the cursor then at its body).
 *
 * @param cur The pattern.
 * @param start The `(`.
 * @returns What was read.
 * @throws {import("./pcre_tree.ts").PcreError} PCRE2's refusal.
 */
export function readVerb(cur: Cursor, start: number): VerbRead {
  const s = cur.s;
  let p = start + 2;
  if (p >= s.length || s[p] === ")") {
    // `(*` is no group: its `*` quantifies nothing.
    fail("quantifier does not follow a repeatable item", start + 1);
  }
  const name = /^\w*/.exec(s.slice(p))![0];
  p += name.length;
  const at = p >= s.length ? null : p;
  if (name.length > 32) {
    fail("subpattern name is too long (maximum 32 code units)", at);
  }
  if (/^[a-z]/.test(name)) {
    const form = ALPHA_ASSERTIONS.get(name);
    if (s[p] !== ":" || form === undefined) {
      return fail("(*alpha_assertion) not recognized", at);
    }
    cur.at = p + 1;
    return { kind: "alpha", form };
  }
  if (s[p] !== ":" && s[p] !== ")") {
    fail("(*VERB) not recognized or malformed", at);
  }
  if (!VERBS.has(name)) fail("(*VERB) not recognized or malformed", p);
  // An empty argument is none.
  if (s[p] === ":" && s[p + 1] === ")") p++;
  if ((name === "" || name === "MARK") && s[p] !== ":") {
    fail("(*MARK) must have an argument", p);
  }
  const close = s.indexOf(")", p);
  if (close < 0) fail("(*VERB) not recognized or malformed", null);
  cur.at = close + 1;
  return { kind: "verb", name };
}
