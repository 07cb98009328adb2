import { strictEqual } from "node:assert/strict";
import {
  checkPassword,
  type PasswordScheme,
  passwordScheme,
} from "../../src/access/mod.ts";

/** A UTF-8 text as the ByteString a header or file gives (one char per byte). */
function bytes(text: string): string {
  return String.fromCharCode(...new TextEncoder().encode(text));
}

function run(stored: string, password: string): boolean {
  const steps = checkPassword(stored, password);
  for (let i = 0; i < 1e6; i++) {
    const r = steps.next();
    if (r.done) return r.value;
  }
  throw new Error("did not finish");
}

// Values made with `openssl passwd -apr1|-1 -salt …` and Python's crypt()
// (libxcrypt, as nginx on Linux calls it), and base64(SHA1(…)) by hand.
const X80 = "x".repeat(80);
const X71 = "x".repeat(71);
const CASES: [string, PasswordScheme, string, string, boolean][] = [
  // [name, scheme, stored, password, match]
  ["plain", "plain", "{PLAIN}secret", "secret", true],
  ["plain wrong", "plain", "{PLAIN}secret", "secreT", false],
  ["plain empty", "plain", "{PLAIN}", "", true],
  ["sha", "sha", "{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=", "password", true],
  ["sha wrong", "sha", "{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=", "passwor", false],
  [
    "ssha",
    "ssha",
    "{SSHA}rXVtWiPAY6/w8MuTLKIjpBjj2mtzYWx0MTIzNA==",
    "password",
    true,
  ],
  [
    "ssha wrong",
    "ssha",
    "{SSHA}rXVtWiPAY6/w8MuTLKIjpBjj2mtzYWx0MTIzNA==",
    "Password",
    false,
  ],
  ["ssha short: no salt", "ssha", "{SSHA}AAAA", "x", false],
  ["ssha undecodable", "ssha", "{SSHA}!!", "x", false],
  ["apr1", "apr1", "$apr1$abcdefgh$FBwExRW4dCc8aL.OvjpIE1", "password", true],
  ["apr1 wrong", "apr1", "$apr1$abcdefgh$FBwExRW4dCc8aL.OvjpIE1", "pw", false],
  [
    "apr1 utf-8",
    "apr1",
    "$apr1$Xy3.zZ/9$b8/BfuM67fVhfyCGjDy1u.",
    bytes("pässwörd"),
    true,
  ],
  [
    "apr1 empty, short salt",
    "apr1",
    "$apr1$ab$S8K6Sgp3W8c9Jb6LxgywZ.",
    "",
    true,
  ],
  [
    "apr1 long",
    "apr1",
    "$apr1$abcdefgh$RUnTnqy1At711BKYHTVnw/",
    "a-very-long-password-longer-than-sixteen-bytes",
    true,
  ],
  ["md5 $1$", "md5", "$1$saltsalt$qjXMvbEw8oaL.CzflDtaK/", "password", true],
  ["md5 $1$ wrong", "md5", "$1$saltsalt$qjXMvbEw8oaL.CzflDtaK/", "x", false],
  [
    "bcrypt 2a",
    "bcrypt",
    "$2a$04$abcdefghijklmnopqrstuughE8Ev8uGFaUgY2cNEySvxngrb/Jzdm",
    "password",
    true,
  ],
  [
    "bcrypt 2a empty",
    "bcrypt",
    "$2a$04$abcdefghijklmnopqrstuubyCG3zY1GIXMyxfivm.ClDiInHzxjiq",
    "",
    true,
  ],
  [
    "bcrypt 2y",
    "bcrypt",
    "$2y$04$0123456789ABCDEFGHIJKusaXA5lIsB08VDGhlRdyrotVUs6YHnzK",
    "password",
    true,
  ],
  [
    "bcrypt 2y 80 bytes: only 72 count",
    "bcrypt",
    "$2y$04$0123456789ABCDEFGHIJKuLYxWbTZrA9pRJwWQhpUTe0V4dxPp6gW",
    X80,
    true,
  ],
  [
    "bcrypt 2y 80 bytes, 73rd differs",
    "bcrypt",
    "$2y$04$0123456789ABCDEFGHIJKuLYxWbTZrA9pRJwWQhpUTe0V4dxPp6gW",
    "x".repeat(72) + "yyyyyyyy",
    true,
  ],
  [
    "bcrypt 2b 71 bytes",
    "bcrypt",
    "$2b$04$......................MUTKUDIj4cZc60IEsGqjRod/wxELAN.",
    X71,
    true,
  ],
  [
    "bcrypt 2b wrong",
    "bcrypt",
    "$2b$04$......................LAtw7/ohmmBAhnXqmkuIz83Rl5Qdjhm",
    "passwore",
    false,
  ],
  [
    "bcrypt cost 03 refused",
    "bcrypt",
    "$2b$03$......................LAtw7/ohmmBAhnXqmkuIz83Rl5Qdjhm",
    "password",
    false,
  ],
  ["bcrypt short salt", "bcrypt", "$2b$04$abc", "password", false],
  [
    "sha-256 crypt",
    "sha-crypt",
    "$5$saltstring$OH4IDuTlsuTYPdED1gsuiRMyTAwNlRWyA6Xr3I4/dQ5",
    "password",
    true,
  ],
  [
    "sha-512 crypt",
    "sha-crypt",
    "$6$saltstring$adDbXsJjcDlq2662QPgd.tkSOVmnG9Tt3oXl4HR60SusC3AGjirnDenVZp3DGwLwqy6iYKCzannhaX9DR72nN1",
    "password",
    true,
  ],
  [
    "sha-512 crypt wrong",
    "sha-crypt",
    "$6$saltstring$adDbXsJjcDlq2662QPgd.tkSOVmnG9Tt3oXl4HR60SusC3AGjirnDenVZp3DGwLwqy6iYKCzannhaX9DR72nN1",
    "passwore",
    false,
  ],
  [
    "sha-512 crypt rounds, empty password",
    "sha-crypt",
    "$6$rounds=1000$ab$ibFMAI/Igw53aVaJxJu4wwQmU0jF8lxiKV6mtjRJmbxKnzQU8fIizULiJeSfGn7H54dbRhqwIBpklchs8nlWi.",
    "",
    true,
  ],
  [
    "sha-256 crypt rounds, salt cut at 16",
    "sha-crypt",
    "$5$rounds=1200$0123456789abcdef$C/RQ97uDqiSxQap06P3TekAvv5B86drtxcuEYwHzg52",
    "a".repeat(70),
    true,
  ],
  [
    "sha-512 crypt utf-8",
    "sha-crypt",
    "$6$x/y.z$FUdxbU9pJDiNO35KMcFYWEuB2.6RXSUj2uTDRyuQtoOxu3tojISmya7WkX8DFkeZp/.EjLvxhkp7JanO7wRuN/",
    bytes("pässwörd"),
    true,
  ],
  // nginx for Windows compares any other value as a plain password.
  ["text", "text", "secret", "secret", true],
  ["text wrong", "text", "secret", "secret2", false],
  ["unknown $y$ as text", "text", "$y$salt$hash", "$y$salt$hash", true],
  // C strings: a NUL ends the password nginx hashes.
  ["NUL ends the password", "plain", "{PLAIN}abc", "abc\0def", true],
];

for (const [name, scheme, stored, password, match] of CASES) {
  Deno.test(`checkPassword() ${name}`, () => {
    strictEqual(passwordScheme(stored), scheme);
    strictEqual(run(stored, password), match);
  });
}
