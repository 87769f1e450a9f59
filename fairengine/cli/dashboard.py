"""``fairengine dashboard``: the bundled ``dashboard/app.py`` run as ``python -m streamlit run``
with the bundled ``.streamlit/config.toml`` as command-line options (so they apply from any
folder) and the user's port, address, base URL path and demo mode."""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path

from fairengine.cli.shared import UsageError, arg
from fairengine.resources import bundle_root, dashboard_app
from fairengine.settings import DEMO_ENV, SettingsError, load

#: Modules the dashboard needs beyond the engine (the ``[dashboard]`` extra).
EXTRA_MODULES = ("streamlit", "plotly")


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def streamlit_options(config: Path) -> list[str]:
    """``--section.option=value`` for every setting of a Streamlit ``config.toml`` (none if the
    file is absent)."""
    try:
        settings = tomllib.loads(config.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    options = []
    for section, values in settings.items():
        for key, value in values.items():
            text = str(value).lower() if isinstance(value, bool) else str(value)
            options.append(f"--{section}.{key}={text}")
    return options


def dashboard_command(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> tuple[list[str], dict[str, str]]:
    """The Streamlit command line and environment that serve the dashboard for ``args``."""
    env = dict(os.environ if environ is None else environ)
    if args.demo:
        env[DEMO_ENV] = "1"
    command = [sys.executable, "-m", "streamlit", "run", str(dashboard_app())]
    command += streamlit_options(bundle_root() / ".streamlit" / "config.toml")
    command += [
        f"--server.port={args.port}",
        f"--server.address={args.address}",
        f"--server.baseUrlPath={args.base_url_path.strip('/')}",
    ]
    if args.headless:
        command.append("--server.headless=true")
    return command, env


def run_dashboard(args: argparse.Namespace) -> int:
    """Serve the dashboard until interrupted; :class:`UsageError` (exit status 2) when the extra
    is missing or a ``FAIRENGINE_*`` variable does not parse."""
    missing = [name for name in EXTRA_MODULES if not _importable(name)]
    if missing:
        raise UsageError(
            "The dashboard needs Streamlit and plotly, which this installation lacks (missing: "
            f"{', '.join(missing)}). Add them with the dashboard extra: pip install "
            '"fairengine[dashboard]" (from a wheel file: pip install '
            '"fairengine-<version>-py3-none-any.whl[dashboard]"), then run fairengine dashboard '
            "again."
        )
    app = dashboard_app()
    if not app.is_file():
        raise UsageError(f"The dashboard's files are missing (no {app}). Reinstall fairengine.")
    command, env = dashboard_command(args)
    try:
        load(env)  # a FAIRENGINE_* value the server could not use: said now, in words
    except SettingsError as exc:
        raise UsageError(str(exc)) from None
    if os.name == "posix":  # the server takes this process's id, so stopping it stops the server
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, command, env)
    return subprocess.call(command, env=env)


COMMAND = {"dashboard": (
    ("start the dashboard in the browser (needs the [dashboard] extra)",
     "Start the fairengine dashboard (a Streamlit app) on the bundled data. Needs Streamlit and "
     'plotly: pip install "fairengine[dashboard]".'),
    run_dashboard, [
        arg("--port", type=int, default=8501, help="port to serve on (default: 8501)"),
        arg("--address", default="localhost",
            help="address to listen on (default: localhost; 0.0.0.0 serves every network "
            "interface)"),
        arg("--base-url-path", default="",
            help="URL path prefix behind a reverse proxy, e.g. fairengine for "
            "http://host/fairengine/"),
        arg("--demo", action="store_true",
            help="demo mode for a shared host: caps rows, sweep sizes and waiting jobs"),
        arg("--headless", action="store_true",
            help="do not open a browser window (servers, CI)"),
    ],
)}  # fmt: skip
