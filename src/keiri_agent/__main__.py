"""``python -m keiri_agent``: the same command line as ``keiri-agent``."""

from keiri_agent.cli import app

if __name__ == "__main__":
    app(prog_name="keiri-agent")
