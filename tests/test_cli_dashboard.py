"""``fairengine dashboard``: its options, the Streamlit command it runs, and the message when the
[dashboard] extra is missing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from fairengine import resources
from fairengine.cli import build_parser
from fairengine.cli.dashboard import dashboard_command, streamlit_options

REPO = Path(__file__).resolve().parents[1]


def _run(code_before: str, *argv: str) -> subprocess.CompletedProcess:
    """``fairengine`` in a fresh interpreter (from the checkout), after ``code_before``."""
    code = textwrap.dedent(code_before) + "\nfrom fairengine.cli import main\n"
    code += f"raise SystemExit(main({list(argv)!r}))\n"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )


def test_help_lists_the_options() -> None:
    done = _run("", "dashboard", "--help")
    assert done.returncode == 0
    for option in ("--port", "--address", "--base-url-path", "--demo", "--headless"):
        assert option in done.stdout
    assert 'pip install "fairengine[dashboard]"' in " ".join(done.stdout.split())


BLOCK_EXTRA = """
import importlib.abc, sys

class NoExtra(importlib.abc.MetaPathFinder):  # as if the [dashboard] extra were not installed
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("streamlit", "plotly"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoExtra())
"""


def test_missing_extra_is_said_in_words() -> None:
    done = _run(BLOCK_EXTRA, "dashboard", "--port", "8599")
    assert done.returncode == 2
    message = " ".join(done.stderr.split())
    assert message.startswith("fairengine: error: The dashboard needs Streamlit and plotly")
    assert "missing: streamlit, plotly" in message
    assert 'pip install "fairengine[dashboard]"' in message
    assert "Traceback" not in done.stderr


def test_a_bad_setting_is_said_in_words_before_the_server_starts() -> None:
    code = "import os\nos.environ['FAIRENGINE_WORKERS'] = 'many'\n"
    done = _run(code, "dashboard", "--port", "8599")
    assert done.returncode == 2
    message = " ".join(done.stderr.split())
    assert (
        message
        == "fairengine: error: FAIRENGINE_WORKERS must be a whole number of at least 1; got 'many'."
    )


def test_command_serves_the_bundled_app_with_the_project_settings() -> None:
    args = build_parser().parse_args(
        ["dashboard", "--port", "8600", "--address", "0.0.0.0", "--base-url-path", "/tools/fair/"]
    )
    command, env = dashboard_command(args, environ={"PATH": "/bin"})
    assert command[:5] == [sys.executable, "-m", "streamlit", "run", str(resources.dashboard_app())]
    assert "--server.port=8600" in command and "--server.address=0.0.0.0" in command
    assert "--server.baseUrlPath=tools/fair" in command
    assert "--server.maxUploadSize=200" in command  # from .streamlit/config.toml
    assert "--runner.postScriptGC=false" in command
    assert "--server.headless=true" not in command
    assert env == {"PATH": "/bin"}  # no demo mode unless asked


def test_demo_mode_and_headless() -> None:
    args = build_parser().parse_args(["dashboard", "--demo", "--headless"])
    command, env = dashboard_command(args, environ={})
    assert env["FAIRENGINE_DEMO"] == "1" and "--server.headless=true" in command
    assert "--server.port=8501" in command and "--server.address=localhost" in command


def test_streamlit_options_read_every_setting(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[server]\nmaxUploadSize = 5\nrunOnSave = true\n[theme]\nbase = "dark"\n')
    assert streamlit_options(config) == [
        "--server.maxUploadSize=5",
        "--server.runOnSave=true",
        "--theme.base=dark",
    ]
    assert streamlit_options(tmp_path / "absent.toml") == []
