"""Run one parser in a child process with a memory and CPU limit: ``run_bounded``.

A PDF stream, an XML part or a worksheet can expand to gigabytes inside PDFium, lxml or
openpyxl, where no size check of ours can reach. So the parsers of binary formats run in a
forked child whose address space may grow by at most ``MAX_PARSE_MEMORY_BYTES`` over what it
inherited (RLIMIT_AS) and whose CPU time is capped (RLIMIT_CPU): the kernel enforces the
bound for any input, and the caller only ever holds the result. A child that runs out of
either is reported as a ``FileProcessingError`` naming the file and the limit.

The child is forked, not spawned: it inherits the imported libraries, so a read costs a fork
(milliseconds) rather than a second of imports. The parent may have other threads (plan nodes,
the API server); the child only parses, pickles its result into a pipe and leaves with
``os._exit``, touching no lock another thread could have held. Results and ``BlockError``s
travel back pickled; any other exception is re-raised in the caller as it was (with the
child's traceback as a note), so readers keep catching what they caught before.
"""

from __future__ import annotations

import os
import pickle
import resource
import signal
import sys
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

from keiri_agent.documents.failures import too_large
from keiri_agent.documents.limits import MAX_PARSE_CPU_SECONDS, MAX_PARSE_MEMORY_BYTES, MiB
from keiri_agent.errors import BlockError, ErrorCode, FileProcessingError
from keiri_agent.rlimits import lower_limit

__all__ = ["run_bounded"]

T = TypeVar("T")

_CHUNK = 1024 * 1024
# The hard CPU limit (SIGKILL) follows the soft one (SIGXCPU) after this many seconds.
_CPU_GRACE_SECONDS = 2
_OK, _BLOCK_ERROR, _EXCEPTION, _OUT_OF_MEMORY = "ok", "block_error", "exception", "memory"


def run_bounded(
    func: Callable[..., T],
    *args: Any,
    label: str,
    memory_bytes: int = MAX_PARSE_MEMORY_BYTES,
    cpu_seconds: int = MAX_PARSE_CPU_SECONDS,
) -> T:
    """``func(*args)`` computed in a child limited to ``memory_bytes`` more address space and
    ``cpu_seconds`` of CPU; ``label`` (the file name) is used in the errors.

    Raises FileProcessingError FILE_TOO_LARGE when the child runs out of memory (or dies
    from a signal, which is how native parsers end when an allocation fails), TIMEOUT_ERROR
    when it runs out of CPU time; a ``BlockError`` or other exception raised by ``func``
    is raised here.
    """
    base = _address_space()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_fd)
        _child(write_fd, base + memory_bytes, cpu_seconds, func, args)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        payload = pipe.read()
    _pid, status, usage = os.wait4(pid, 0)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        kind, value = pickle.loads(payload)  # written by our own child, never by input
        if kind == _OK:
            return value  # type: ignore[no-any-return]
        if kind == _BLOCK_ERROR:
            raise _rebuild(value)
        if kind == _EXCEPTION:
            exc, child_traceback = value
            exc.add_note(f"（子プロセスでの発生箇所）\n{child_traceback}")
            raise exc
    # Out of memory (MemoryError, or a native parser killed by its failed allocation).
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    if sig in (signal.SIGXCPU, signal.SIGKILL) and usage.ru_utime + usage.ru_stime >= cpu_seconds:
        raise FileProcessingError(
            label,
            f"「{label}」の読み込みが CPU 時間の上限（{cpu_seconds:,} 秒）を超えたため中止しました。",
            code=ErrorCode.TIMEOUT_ERROR,
            hint="ファイルが複雑すぎるか壊れています。必要なページやシートだけを別ファイルに"
            "保存し直してから渡してください。",
            details={"limit_seconds": cpu_seconds},
        )
    raise too_large(
        label,
        (
            f"「{label}」は読み込みに必要なメモリが上限（{memory_bytes // MiB:,} MB）を超えるため"
            "読み込めません（展開すると非常に大きくなるデータを含んでいます）。"
        ),
        (
            "必要なページやシートだけを別ファイルに保存し直すか、ファイルを分割してから"
            "渡してください。意図しないファイルであれば、作成元に確認してください。"
        ),
        limit_bytes=memory_bytes,
        signal=signal.Signals(sig).name if sig else None,
        exit_status=os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
    )


def _child(
    write_fd: int,
    address_space: int,
    cpu_seconds: int,
    func: Callable[..., Any],
    args: tuple[Any, ...],
) -> None:
    status = 0
    try:
        # pyarrow (pandas' string columns) allocates from jemalloc, which reserves address
        # space in large extents and fails at once under RLIMIT_AS; malloc is bounded as it goes.
        arrow = sys.modules.get("pyarrow")
        if arrow is not None:
            arrow.set_memory_pool(arrow.system_memory_pool())
        lower_limit(resource.RLIMIT_CORE, 0)
        lower_limit(resource.RLIMIT_AS, address_space)
        lower_limit(resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + _CPU_GRACE_SECONDS)
        try:
            payload = pickle.dumps((_OK, func(*args)), protocol=pickle.HIGHEST_PROTOCOL)
        except MemoryError:
            payload = pickle.dumps((_OUT_OF_MEMORY, None))
        except BlockError as exc:
            payload = pickle.dumps(
                (_BLOCK_ERROR, (type(exc) is FileProcessingError, exc.to_dict()))
            )
        except Exception as exc:
            payload = _exception_payload(exc)
        view = memoryview(payload)
        while view:
            view = view[os.write(write_fd, view[:_CHUNK]) :]
    except BaseException:  # nothing may escape into the caller's copy of the stack
        status = 1
    finally:
        os._exit(status)


def _exception_payload(exc: Exception) -> bytes:
    text = "".join(traceback.format_exception(exc))
    try:
        return pickle.dumps((_EXCEPTION, (exc, text)))
    except Exception:  # an exception that cannot be pickled travels as a RuntimeError
        return pickle.dumps((_EXCEPTION, (RuntimeError(f"{type(exc).__name__}: {exc}"), text)))


def _rebuild(value: tuple[bool, dict[str, Any]]) -> BlockError:
    is_file_error, data = value
    if not is_file_error:
        return BlockError.from_dict(data)
    details = dict(data.get("details") or {})
    return FileProcessingError(
        str(details.get("file", "")),
        str(data.get("message", "")),
        code=str(data.get("code")),
        hint=str(data.get("hint", "")),
        details=details,
    )


def _address_space() -> int:
    """This process's virtual size (what RLIMIT_AS counts), from /proc."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise OSError("VmSize missing from /proc/self/status")
