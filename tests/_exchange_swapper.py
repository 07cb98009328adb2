"""Swaps two names atomically (Linux renameat2 RENAME_EXCHANGE) until killed
or MAX_SECONDS: a folder and a link to an outside folder trade places in one
system call each way. Prints "ready" once it has swapped twice.

Without PER_BYTE it swaps as fast as it can, so the link is in place half
the time. With PER_BYTE it swaps that many times for each byte read from
stdin and waits blocked in read() while it has none, so its work is bounded
by the test's requests (a byte each), not by how long a loaded machine takes
to serve them; stdin's end stops it.

Usage: python3 _exchange_swapper.py NAME_A NAME_B MAX_SECONDS [PER_BYTE]
"""
import ctypes
import os
import sys
import time

AT_FDCWD = -100
RENAME_EXCHANGE = 2

libc = ctypes.CDLL(None, use_errno=True)
a = os.fsencode(sys.argv[1])
b = os.fsencode(sys.argv[2])
end = time.monotonic() + float(sys.argv[3])
per_byte = int(sys.argv[4]) if len(sys.argv) > 4 else 0
budget = 0
swaps = 0
while True:
    if per_byte:
        if budget == 0:
            granted = os.read(0, 4096)
            if not granted or time.monotonic() > end:
                break
            budget = len(granted) * per_byte
        budget -= 1
    if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
        sys.stderr.write("renameat2: %s\n" % os.strerror(ctypes.get_errno()))
        sys.exit(1)
    swaps += 1
    if swaps == 2:
        print("ready", flush=True)
    if swaps % 1024 == 0 and time.monotonic() > end:
        break
