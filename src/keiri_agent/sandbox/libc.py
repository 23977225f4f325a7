"""The C library as the sandbox layers call it: one handle, ``prctl``, and a failed call's error.

Landlock, seccomp, an action's namespaces and mounts, capabilities, the subreaper and huge pages
are C calls without a Python wrapper. Each layer declares the argument types of the calls it
makes on :data:`LIBC` and checks a call here, so that every failure raises the same ``OSError``:
the errno of the call that failed, its ``strerror``, and what was called.
"""

from __future__ import annotations

import ctypes
import os

__all__ = ["LIBC", "check", "last_error", "prctl"]

# use_errno: each call's errno is kept, so a failure reads the errno of the call that failed.
LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.syscall.restype = ctypes.c_long
LIBC.prctl.restype = ctypes.c_int


def prctl(option: int, arg2: int = 0, arg3: int = 0) -> int:
    """``prctl(option, arg2, arg3, 0, 0)`` with errno cleared first: 0 or a value on success,
    -1 with errno set on failure."""
    ctypes.set_errno(0)
    zero = ctypes.c_ulong(0)
    args = (ctypes.c_ulong(arg2), ctypes.c_ulong(arg3), zero, zero)
    return int(LIBC.prctl(ctypes.c_int(option), *args))


def last_error(call: str) -> OSError:
    """The error of the C call that just failed: its errno and ``strerror``, after ``call``."""
    err = ctypes.get_errno()
    return OSError(err, f"{call}: {os.strerror(err)}")


def check(result: int, call: str) -> None:
    """Raise :func:`last_error` unless ``result`` is 0 (success of the C call ``call``)."""
    if result != 0:
        raise last_error(call)
