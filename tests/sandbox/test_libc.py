"""The sandbox layers' one way into the C library: a failed call raises its own errno, named."""

from __future__ import annotations

import ctypes
import errno
import os

import pytest

from keiri_agent.sandbox.libc import LIBC, check, prctl

PR_GET_DUMPABLE = 3


def test_a_failed_call_raises_its_errno_naming_the_call() -> None:
    with pytest.raises(OSError, match=r"close\(-1\)") as caught:
        check(LIBC.close(-1), "close(-1)")
    assert caught.value.errno == errno.EBADF
    assert caught.value.strerror == f"close(-1): {os.strerror(errno.EBADF)}"


def test_a_call_that_succeeds_passes() -> None:
    check(0, "nothing")


def test_prctl_answers_as_the_kernel_does() -> None:
    assert prctl(PR_GET_DUMPABLE) in (0, 1, 2)
    assert prctl(-1) == -1
    assert ctypes.get_errno() == errno.EINVAL
