"""`keiri-agent ui` starts a headless Streamlit server that serves the app, and like
``streamlit run app.py`` in the repository root (``.streamlit/config.toml``) it listens on this
machine only: Streamlit alone would listen on every interface."""

from __future__ import annotations

import ipaddress
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.support.english import cli_words, english_of
from tests.support.processes import free_port, stop_process_group

STARTUP_TIMEOUT_S = 180
REPO_ROOT = Path(__file__).resolve().parents[2]
LISTEN = "0A"  # the TCP state LISTEN in /proc/net/tcp


def _get(url: str) -> tuple[int, str]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback, no proxy
    with opener.open(url, timeout=2) as response:
        return response.status, response.read().decode("utf-8", "replace")


def _listening(port: int) -> set[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The local addresses of the sockets listening on ``port`` (from /proc/net/tcp{,6})."""
    found: set[ipaddress.IPv4Address | ipaddress.IPv6Address] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        with open(table, encoding="ascii") as lines:
            next(lines)
            for line in lines:
                local, state = line.split()[1], line.split()[3]
                address, _, hex_port = local.partition(":")
                if state != LISTEN or int(hex_port, 16) != port:
                    continue
                # The kernel writes each 32-bit word of the address in host (little-endian) order.
                raw = bytes.fromhex(address)
                words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
                found.add(ipaddress.ip_address(words))
    return found


def _is_loopback(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    mapped = getattr(address, "ipv4_mapped", None)
    return bool((mapped or address).is_loopback)


def _serve(
    command: list[str], port: int, log_path: Path, cwd: Path | None = None, printed: str = ""
) -> str:
    """Start ``command``, wait until it answers on 127.0.0.1:``port`` and has printed
    ``printed``, check the page and the listening sockets, and return what it printed."""
    if not os.path.exists("/proc/net/tcp"):
        pytest.skip("no /proc/net/tcp: the listening address cannot be read here")
    log = log_path.open("w+b")
    proc = subprocess.Popen(
        command,
        cwd=cwd,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own group, so the server and its children stop together
    )
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        health = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                health = _get(f"http://127.0.0.1:{port}/_stcore/health")
                break
            except OSError:
                time.sleep(0.3)
        log.seek(0)
        output = log.read().decode("utf-8", "replace")
        while printed not in output and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.3)
            log.seek(0)
            output = log.read().decode("utf-8", "replace")
        assert health == (200, "ok"), output
        assert printed in output, output
        status, page = _get(f"http://127.0.0.1:{port}/")
        assert status == 200
        assert '<div id="root">' in page or "streamlit" in page.lower()
        addresses = _listening(port)
        assert addresses, output
        assert all(_is_loopback(a) for a in addresses), (addresses, output)
        return output
    finally:
        stop_process_group(proc)
        log.close()


def test_ui_command_serves_the_app_on_this_machine_only(tmp_path: Path) -> None:
    command = Path(sys.executable).with_name("keiri-agent")
    if not command.exists():
        pytest.skip("the keiri-agent console script is not installed next to this Python")
    port = free_port()
    ready = f"画面の準備ができました。ブラウザで http://127.0.0.1:{port}/ を開いてください。"
    output = _serve(
        [str(command), "ui", "--port", str(port)], port, tmp_path / "ui.log", None, ready
    )
    assert "警告" not in output
    # Streamlit's English start banner does not reach the accountant's terminal.
    assert "You can now view" not in output
    assert "URL:" not in output
    assert "server started" not in output.lower()


def test_streamlit_run_in_the_repository_listens_on_this_machine_only(tmp_path: Path) -> None:
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true"]
    _serve([*command, "--server.port", str(port)], port, tmp_path / "st.log", cwd=REPO_ROOT)


def _printed(log_path: Path) -> str:
    return log_path.read_bytes().decode("utf-8", "replace")


def _until_ready_then_ctrl_c(
    extra: list[str], log_path: Path, *awaited: str, group: bool = True
) -> str:
    """Run ``keiri-agent ui`` with ``extra`` until it has printed that it is ready (and every
    text of ``awaited``), press Ctrl+C (``group``: to the whole group, as a terminal does; else
    SIGINT to the command alone, as ``kill -INT`` or an IDE's stop button), and return all it
    printed."""
    command = [str(_ui_command()), "ui", "--port", str(free_port()), *extra]
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own group, as a terminal's foreground job
        )
        try:
            deadline = time.monotonic() + STARTUP_TIMEOUT_S
            while not all(t in _printed(log_path) for t in ("画面の準備ができました", *awaited)):
                assert proc.poll() is None, _printed(log_path)
                assert time.monotonic() < deadline, _printed(log_path)
                time.sleep(0.3)
            if group:
                os.killpg(proc.pid, signal.SIGINT)
            else:
                proc.send_signal(signal.SIGINT)
            proc.wait(timeout=STARTUP_TIMEOUT_S)
        finally:
            stop_process_group(proc)
    return _printed(log_path)


@pytest.mark.parametrize("group", [True, False], ids=["terminal", "command-alone"])
def test_ctrl_c_stops_the_ui_command_and_says_so_in_japanese(tmp_path: Path, group: bool) -> None:
    """Ctrl+C in the terminal reaches the whole foreground group (the command and Streamlit);
    SIGINT sent to the command alone stops the app as well. What the accountant then reads is
    Japanese, with no English line from the library."""
    output = _until_ready_then_ctrl_c([], tmp_path / "ui.log", group=group)
    assert "画面を終了しました。" in output, output
    assert "Stopping" not in output, output
    _japanese_only(output)


def _japanese_only(output: str) -> None:
    """Every line printed is the command's Japanese: none is a library's English alone."""
    lines = [line for line in output.splitlines() if line.strip()]
    assert lines, output
    assert all(re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", line) for line in lines), output


def _ui_command() -> Path:
    command = Path(sys.executable).with_name("keiri-agent")
    if not command.exists():
        pytest.skip("the keiri-agent console script is not installed next to this Python")
    return command


def _run_until_it_ends(command: list[str]) -> tuple[int, str]:
    proc = subprocess.run(
        command, capture_output=True, timeout=STARTUP_TIMEOUT_S, start_new_session=True
    )
    return proc.returncode, (proc.stdout + proc.stderr).decode("utf-8", "replace")


def test_a_port_in_use_is_said_in_japanese_and_the_command_fails() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, output = _run_until_it_ends([str(_ui_command()), "ui", "--port", str(port)])

    assert code != 0, output
    assert f"ポート {port} は他のプログラムが使っているため、画面を起動できません。" in output
    assert "not available" not in output
    _japanese_only(output)


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--server.nosuch", "1"], "streamlit run にオプション --server.nosuch はありません"),
        (
            ["--server.maxUploadSize", "abc"],
            "オプション --server.maxUploadSize の値「abc」が正しくありません（整数を指定",
        ),
        # Streamlit fails with a traceback: said in Japanese, its English kept in a file.
        (["--theme.base", "no-such-theme"], "画面（Streamlit）でエラーが起きました（"),
    ],
    ids=["unknown option", "bad value", "traceback"],
)
def test_a_streamlit_option_it_refuses_is_said_in_japanese(extra: list[str], said: str) -> None:
    code, output = _run_until_it_ends(
        [str(_ui_command()), "ui", "--port", str(free_port()), *extra]
    )

    assert code != 0, output
    assert said in output, output
    assert "Usage:" not in output
    assert "Traceback" not in output
    _japanese_only(output)
    assert english_of(output, allowed=cli_words()) == []
    for record in re.findall(r"原文は (\S+) に記録しました", output):  # Streamlit's own words
        assert Path(record).read_text(encoding="utf-8").strip()


def test_a_streamlit_warning_while_it_serves_is_said_in_japanese(tmp_path: Path) -> None:
    """Streamlit's English note on an open CORS setting, written while it starts and followed by
    nothing until the app serves, is said in Japanese."""
    extra = ["--server.enableCORS", "false"]
    output = _until_ready_then_ctrl_c(extra, tmp_path / "ui.log", "注意:")
    assert "注意: server.enableCORS=false のため、ほかのサイトのページからも" in output, output
    assert "tells Streamlit" not in output
    _japanese_only(output)
