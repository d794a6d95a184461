#!/usr/bin/env python3
"""Set up a virtualenv and run cypherbot's main job, its tests or its benchmarks.

Needs nothing but Python 3.11+:

    python3 dev.py run      # install, then start the playground (or the Slack bot when tokens are set)
    python3 dev.py test     # install, then lint, type-check and run the whole test suite
    python3 dev.py bench    # install, then run every benchmark (add --quick for a short run)
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".cypherbot-installed"


def _sh(*args: str | Path) -> int:
    return subprocess.call([str(a) for a in args], cwd=ROOT)


def ensure_venv() -> None:
    """Create .venv and install cypherbot with its dev extras when pyproject.toml changed."""
    if sys.version_info < (3, 11):  # noqa: UP036 - this script may run on an old python3
        sys.exit(f"cypherbot needs Python 3.11 or newer; this is {sys.version.split()[0]}.")
    if not PY.exists():
        print("Creating the virtualenv in .venv …", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == wanted:
        return
    print("Installing cypherbot and its dependencies into .venv …", flush=True)
    steps = [
        [PY, "-m", "pip", "install", "-q", "--upgrade", "pip"],
        [PY, "-m", "pip", "install", "-q", "-e", ".[dev]"],
    ]
    for step in steps:
        if _sh(*step) != 0:
            sys.exit("Installing failed (see above). Check your network access to PyPI and retry.")
    STAMP.write_text(wanted)


def run_tests(extra: list[str]) -> int:
    checks: list[tuple[str, list[str | Path]]] = [
        ("ruff check", [PY, "-m", "ruff", "check", "."]),
        ("ruff format --check", [PY, "-m", "ruff", "format", "--check", "."]),
        ("mypy (strict)", [PY, "-m", "mypy"]),
    ]
    if not extra:
        for name, cmd in checks:
            print(f"== {name}", flush=True)
            if _sh(*cmd) != 0:
                print(f"FAILED: {name}", flush=True)
                return 1
    print("== pytest", flush=True)
    code = _sh(PY, "-m", "pytest", *extra)
    if code == 5:
        print("FAILED: pytest collected no tests.", flush=True)
        return 1
    return code


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"run", "test", "bench", "setup"}:
        print(__doc__)
        return 2
    command, rest = argv[0], argv[1:]
    ensure_venv()
    if command == "setup":
        return 0
    if command == "test":
        return run_tests(rest)
    if command == "bench":
        return _sh(PY, ROOT / "bench" / "run_all.py", *rest)
    cypherbot = str(BIN / "cypherbot")
    if os.name == "posix":
        # Become cypherbot, so signals from a terminal, `timeout` or a supervisor reach it
        # directly and it stops the embedded graph engine on its way out.
        os.execv(cypherbot, [cypherbot, "start", *rest])
    return _sh(cypherbot, "start", *rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
