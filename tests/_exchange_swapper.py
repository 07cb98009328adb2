"""Swaps two names atomically (Linux renameat2 RENAME_EXCHANGE), as fast as
it can, until killed or MAX_SECONDS: a folder and a link to an outside
folder trade places in one system call each way, so the link is in place
half the time. Prints "ready" once it has swapped.

Usage: python3 _exchange_swapper.py NAME_A NAME_B MAX_SECONDS
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
swaps = 0
while True:
    if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
        sys.stderr.write("renameat2: %s\n" % os.strerror(ctypes.get_errno()))
        sys.exit(1)
    swaps += 1
    if swaps == 2:
        print("ready", flush=True)
    if swaps % 1024 == 0 and time.monotonic() > end:
        break
