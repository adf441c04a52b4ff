#!/usr/bin/python3
"""Swaps two paths with renameat2(RENAME_EXCHANGE), as fast as it can, for a while: the process a
sandboxed command leaves behind to race rune's own file operations (tests/sandbox/deputy.test.ts,
src/tools/deputy-race.test.ts).

    swap-racer.py STOPFILE SECONDS A B [A2 B2 ...]

A path may hold a '*' (globbed on every round: a folder that does not exist yet, such as a call's
temporary folder). Prints the number of exchanges that happened. Stops after SECONDS, or early when
STOPFILE exists.
"""
import ctypes
import glob
import os
import sys
import time

NR_RENAMEAT2 = {"x86_64": 316, "aarch64": 276}[os.uname().machine]
AT_FDCWD = -100
RENAME_EXCHANGE = 2

libc = ctypes.CDLL(None, use_errno=True)


def exchange(a: str, b: str) -> bool:
    r = libc.syscall(NR_RENAMEAT2, ctypes.c_int(AT_FDCWD), a.encode(), ctypes.c_int(AT_FDCWD), b.encode(), ctypes.c_uint(RENAME_EXCHANGE))
    return r == 0


def main() -> None:
    stop, seconds, rest = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    pairs = [(rest[i], rest[i + 1]) for i in range(0, len(rest) - 1, 2)]
    end = time.monotonic() + seconds
    swaps = 0
    rounds = 0
    while time.monotonic() < end:
        rounds += 1
        if rounds % 256 == 0 and os.path.exists(stop):
            break
        for a, b in pairs:
            if "*" in a:
                for found in glob.glob(a):
                    other = os.path.join(os.path.dirname(found), os.path.basename(b))
                    swaps += exchange(found, other)
            else:
                swaps += exchange(a, b)
    print(swaps)


main()
