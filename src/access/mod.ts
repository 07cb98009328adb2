/**
 * Access control as nginx's access phase runs it: `allow`/`deny`
 * (`ngx_http_access_module`), `auth_basic` with `auth_basic_user_file`
 * (`ngx_http_auth_basic_module`) and the password formats nginx 1.22
 * accepts, combined by `satisfy`. Compiled from directive arguments once;
 * per request the phase returns a decision with nginx's status, header and
 * error lines as data.
 *
 * @module
 */

export { parseClientAddress, parseIpv4, parseIpv6 } from "./address.ts";
export { formatIpv6, hostAddress } from "./host_address.ts";
export type { ClientAddress } from "./address.ts";
export {
  AccessList,
  type AccessRule,
  type AccessRuleResult,
  parseAccessRule,
} from "./access_rules.ts";
export {
  type BasicCredentials,
  decodeBase64Nginx,
  parseBasicCredentials,
} from "./basic_credentials.ts";
export {
  checkPassword,
  md5Crypt,
  type PasswordScheme,
  passwordScheme,
} from "./crypt.ts";
export { bcryptHash } from "./bcrypt.ts";
export { shaCryptHash } from "./sha_crypt.ts";
export {
  PasswordChecker,
  type PasswordCheckerOptions,
  type PasswordVerdict,
} from "./password_checker.ts";
export {
  lookupUser,
  MAX_VALUE_BYTES,
  UserFileScanner,
  type UserLookup,
} from "./user_file.ts";
export { type FileVersion, UserFileCache } from "./user_file_cache.ts";
export {
  type AccessLogLine,
  type AuthBasicConf,
  type AuthBasicOutcome,
  type AuthBasicRequest,
  checkAuthBasic,
} from "./auth_basic.ts";
export {
  type AccessConf,
  type AccessDecision,
  runAccessPhase,
} from "./access_phase.ts";
export { type GeoEntryResult, GeoTable } from "./geo_table.ts";
