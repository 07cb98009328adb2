/**
 * The limits nginx.conf files set for safety: `limit_req_zone`/`limit_req`
 * (nginx's leaky bucket) and `limit_conn_zone`/`limit_conn`, compiled from
 * directive arguments, with zones bounded by their size as nginx's are.
 * Pure: clocks are injected; the caller waits, logs and answers.
 *
 * @module
 */

export {
  type LimitLogLine,
  type LimitReqRule,
  LimitReqZone,
  type LimitReqZoneSpec,
  type Parsed,
  parseLimitReq,
  parseLimitReqZone,
} from "./limit_req.ts";
export {
  checkLimitReq,
  type LimitReqConf,
  type LimitReqDecision,
  type LimitReqStatus,
} from "./limit_req_check.ts";
export {
  checkLimitConn,
  type LimitConnConf,
  type LimitConnDecision,
  LimitConnZone,
  type LimitConnZoneSpec,
  parseLimitConn,
  parseLimitConnZone,
} from "./limit_conn.ts";
export {
  PAGE_SIZE,
  parseSize,
  parseZoneParam,
  slotBytes,
  usableBytes,
  type ZoneParam,
} from "./zone_size.ts";
