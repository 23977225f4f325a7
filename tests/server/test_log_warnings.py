"""A Python warning in the server's process is a record of its log, in JSON mode a JSON line.

A library's warning can reach the log at any moment of a task (a thread's
``warnings.catch_warnings`` restores the filters as they were when it began and so undoes a
filter another thread set meanwhile: urllib3's DependencyWarning, which requests silences,
appeared in the middle of a restarted server's JSON log). Run in a child process: the logging
and warning set-up are process-wide.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent(
    """
    import logging.config, warnings
    from keiri_agent.server.logconfig import capture_warnings, log_config

    logging.config.dictConfig(log_config("json"))
    capture_warnings()
    logging.getLogger("keiri_agent.server").info("起動しました")
    warnings.warn("SOCKS support in urllib3 requires PySocks", UserWarning)
    """
)


def test_a_warning_is_a_json_record_of_the_server_log() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=120, check=True
    )
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]  # every line is JSON
    (warning,) = [r for r in records if r["logger"] == "py.warnings"]
    assert warning["level"] == "warning"
    assert "SOCKS support in urllib3 requires PySocks" in warning["message"]
