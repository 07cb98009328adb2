/**
 * English operating-system error texts keyed by code, as nginx prints them
 * in `(code: text)`: every code behind an error class Deno throws from the
 * file system or a socket (Rust's `decode_error_kind`, `library/std/src/sys`),
 * on both platforms.
 *
 * nginx for Windows asks `FormatMessage` for English first and strips the
 * trailing period (`src/os/win32/ngx_errno.c`); on Linux it prints
 * `strerror()`. Deno's own error strings follow the Windows UI language
 * (denoland/deno#20394 and XX-net/XX-Net#13552 show localized texts), so the
 * gateway never copies them: it prints from these tables instead.
 *
 * @module
 */

/** Win32 and Winsock texts (Windows SDK `winerror.h`, final period removed). */
export const WINDOWS_ERROR_TEXT: Readonly<Record<number, string>> = {
  1: "Incorrect function",
  2: "The system cannot find the file specified",
  3: "The system cannot find the path specified",
  4: "The system cannot open the file",
  5: "Access is denied",
  6: "The handle is invalid",
  8: "Not enough memory resources are available to process this command",
  14: "Not enough memory resources are available to complete this operation",
  15: "The system cannot find the drive specified",
  17: "The system cannot move the file to a different disk drive",
  19: "The media is write protected",
  21: "The device is not ready",
  32:
    "The process cannot access the file because it is being used by another process",
  33:
    "The process cannot access the file because another process has locked a portion of the file",
  39: "The disk is full",
  53: "The network path was not found",
  67: "The network name cannot be found",
  80: "The file exists",
  87: "The parameter is incorrect",
  109: "The pipe has been ended",
  112: "There is not enough space on the disk",
  121: "The semaphore timeout period has expired",
  123: "The filename, directory name, or volume label syntax is incorrect",
  145: "The directory is not empty",
  161: "The specified path is invalid",
  170: "The requested resource is in use",
  183: "Cannot create a file when that file already exists",
  206: "The filename or extension is too long",
  232: "The pipe is being closed",
  267: "The directory name is invalid",
  336: "An operation is not supported on a directory",
  995:
    "The I/O operation has been aborted because of either a thread exit or an application request",
  1225: "The remote computer refused the network connection",
  1231:
    "The network location cannot be reached. For information about network troubleshooting, see Windows Help",
  1232:
    "The network location cannot be reached. For information about network troubleshooting, see Windows Help",
  1460: "This operation returned because the timeout period expired",
  1921: "The name of the file cannot be resolved by the system",
  10004:
    "A blocking operation was interrupted by a call to WSACancelBlockingCall",
  10009: "The file handle supplied is not valid",
  10013:
    "An attempt was made to access a socket in a way forbidden by its access permissions",
  10014:
    "The system detected an invalid pointer address in attempting to use a pointer argument in a call",
  10022: "An invalid argument was supplied",
  10024: "Too many open files",
  10035: "A non-blocking socket operation could not be completed immediately",
  10038: "An operation was attempted on something that is not a socket",
  10047: "An address incompatible with the requested protocol was used",
  10048:
    "Only one usage of each socket address (protocol/network address/port) is normally permitted",
  10049: "The requested address is not valid in its context",
  10050: "A socket operation encountered a dead network",
  10051: "A socket operation was attempted to an unreachable network",
  10052:
    "The connection has been broken due to keep-alive activity detecting a failure while the operation was in progress",
  10053:
    "An established connection was aborted by the software in your host machine",
  10054: "An existing connection was forcibly closed by the remote host",
  10055:
    "An operation on a socket could not be performed because the system lacked sufficient buffer space or because a queue was full",
  10057:
    "A request to send or receive data was disallowed because the socket is not connected and (when sending on a datagram socket using a sendto call) no address was supplied",
  10058:
    "A request to send or receive data was disallowed because the socket had already been shut down in that direction with a previous shutdown call",
  10060:
    "A connection attempt failed because the connected party did not properly respond after a period of time, or established connection failed because connected host has failed to respond",
  10061:
    "No connection could be made because the target machine actively refused it",
  10064: "A socket operation failed because the destination host was down",
  10065: "A socket operation was attempted to an unreachable host",
  11001: "No such host is known",
  11002:
    "This is usually a temporary error during hostname resolution and means that the local server did not receive a response from an authoritative server",
  11004:
    "The requested name is valid, but no data of the requested type was found",
} as const;

/** glibc `strerror()` texts. */
export const LINUX_ERROR_TEXT: Readonly<Record<number, string>> = {
  1: "Operation not permitted",
  2: "No such file or directory",
  4: "Interrupted system call",
  5: "Input/output error",
  9: "Bad file descriptor",
  11: "Resource temporarily unavailable",
  12: "Cannot allocate memory",
  13: "Permission denied",
  16: "Device or resource busy",
  17: "File exists",
  18: "Invalid cross-device link",
  20: "Not a directory",
  21: "Is a directory",
  22: "Invalid argument",
  23: "Too many open files in system",
  24: "Too many open files",
  26: "Text file busy",
  27: "File too large",
  28: "No space left on device",
  30: "Read-only file system",
  31: "Too many links",
  32: "Broken pipe",
  36: "File name too long",
  39: "Directory not empty",
  40: "Too many levels of symbolic links",
  95: "Operation not supported",
  97: "Address family not supported by protocol",
  98: "Address already in use",
  99: "Cannot assign requested address",
  100: "Network is down",
  101: "Network is unreachable",
  103: "Software caused connection abort",
  104: "Connection reset by peer",
  105: "No buffer space available",
  107: "Transport endpoint is not connected",
  110: "Connection timed out",
  111: "Connection refused",
  112: "Host is down",
  113: "No route to host",
  122: "Disk quota exceeded",
  125: "Operation canceled",
} as const;

/**
 * The codes behind each `Deno.errors` class that carries an OS code: the
 * first is the one printed when Deno's message has no `(os error N)`, the
 * rest are the other codes Rust maps to the same class. Classes without an
 * OS code (`InvalidData`, `UnexpectedEof`, `BadResource`, `NotCapable`…)
 * are absent.
 */
export const DENO_ERROR_CODES: Readonly<
  Record<string, { linux: readonly number[]; windows: readonly number[] }>
> = {
  NotFound: { linux: [2], windows: [2, 3, 15, 53, 67] },
  PermissionDenied: { linux: [13, 1], windows: [5, 10013] },
  ConnectionRefused: { linux: [111], windows: [10061] },
  ConnectionReset: { linux: [104], windows: [10054] },
  ConnectionAborted: { linux: [103], windows: [10053] },
  NotConnected: { linux: [107], windows: [10057] },
  AddrInUse: { linux: [98], windows: [10048] },
  AddrNotAvailable: { linux: [99], windows: [10049] },
  BrokenPipe: { linux: [32], windows: [109, 232] },
  AlreadyExists: { linux: [17], windows: [183, 80] },
  TimedOut: { linux: [110], windows: [10060, 121, 1460] },
  Interrupted: { linux: [4], windows: [10004] },
  WouldBlock: { linux: [11], windows: [10035] },
  Busy: { linux: [16], windows: [170] },
  NotADirectory: { linux: [20], windows: [267] },
  IsADirectory: { linux: [21], windows: [336] },
  FilesystemLoop: { linux: [40], windows: [1921] },
  NetworkUnreachable: { linux: [101], windows: [10051, 1231] },
} as const;
