"""The package as a user gets it: a wheel built from a clean checkout (the tracked files only, copied
out of the repository), installed with its dependencies alone in a fresh virtual environment outside
the repository, runs ``simulate``, ``verify``, ``report``, ``explore`` and ``check`` from there.

It catches what the source tree hides: a file missing from the package data (the explorer's page, the
report's CSS and scripts, ``py.typed``), an import of something only the extras or the checkout
provide, a command that reads a file of the repository. A test rather than a CI step, so that
``python -m pytest -q`` (CI's step 4 and a contributor's full run) includes it; slow (a build and a
venv with numpy and pydantic: about a minute with a warm pip cache), and it needs the package index
or a pip cache.
"""

from __future__ import annotations

import http.client
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import missing

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
# What a bare `pip install mutexlab` must not bring: the extras' packages and the tools.
NOT_INSTALLED = ("scipy", "pytest", "hypothesis", "playwright", "testcontainers", "redis", "ruff", "mypy")


def _run(argv: list[str | Path], cwd: Path, env: dict[str, str], timeout: float = 600) -> str:
    done = subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, (
        f"{argv}: exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    )
    return done.stdout


def _clean_env(venv: Path | None = None) -> dict[str, str]:
    """This environment without what could make the checkout importable (PYTHONPATH, the test venv)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    if venv is not None:
        env["VIRTUAL_ENV"] = str(venv)
        env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    return env


def _tracked() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        missing("git and a git checkout: the wheel is built from the tracked files")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [name for name in out.decode().split("\0") if name and (ROOT / name).is_file()]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str]]:
    """(the wheel, the fresh venv it is installed in, the tracked files it was built from)."""
    if importlib.util.find_spec("build") is None:
        missing("the 'build' package (in the 'test' extra)")
    base = tmp_path_factory.mktemp("wheel")
    src, dist, venv = base / "src", base / "dist", base / "venv"
    tracked = _tracked()
    for name in tracked:  # a clean checkout: no build/, egg-info, caches or venvs of the working tree
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, src / name)
    env = _clean_env()
    _run([sys.executable, "-m", "build", "--wheel", "--outdir", dist, src], base, env)
    (built,) = dist.glob("mutexlab-*.whl")
    _run([sys.executable, "-m", "venv", venv], base, env)
    pip = [venv / "bin" / "python", "-m", "pip", "--disable-pip-version-check"]
    _run([*pip, "install", "--quiet", built], base, env)
    return built, venv, tracked


def test_the_wheel_holds_the_package_and_its_data_and_nothing_else(wheel):
    built, _, tracked = wheel
    names = set(zipfile.ZipFile(built).namelist())
    package = {name.removeprefix("shared/") for name in tracked if name.startswith("shared/mutexlab/")}
    assert package - names == set(), "tracked files of the package missing from the wheel"
    for data in ("mutexlab/py.typed", "mutexlab/explore/static/index.html", "mutexlab/report/report.css"):
        assert data in names
    info = "-".join(built.name.split("-")[:2]) + ".dist-info"  # name-version (the wheel's tags follow)
    assert {name.split("/")[0] for name in names} == {"mutexlab", info}
    if shutil.which("cc") or shutil.which("gcc"):  # the search core is an optional extension
        assert any(n.startswith("mutexlab/check/_core") and n.endswith(".so") for n in names), sorted(names)
    # the licence as an SPDX expression (PEP 639), its text shipped beside the metadata
    metadata = zipfile.ZipFile(built).read(f"{info}/METADATA").decode().splitlines()
    assert "License-Expression: MIT" in metadata and "License-File: LICENSE" in metadata
    assert not any(line.startswith("License: ") for line in metadata), "the deprecated table form"
    assert f"{info}/licenses/LICENSE" in names


def test_the_installed_commands_run_outside_the_repository(wheel, tmp_path):
    _, venv, _ = wheel
    env = _clean_env(venv)
    python = venv / "bin" / "python"
    where = _run([python, "-c", "import mutexlab; print(mutexlab.__file__)"], tmp_path, env)
    assert where.startswith(str(venv)), f"mutexlab imported from {where}, not from the venv"
    for name in NOT_INSTALLED:
        found = _run(
            [python, "-c", f"import importlib.util as u; print(u.find_spec({name!r}))"], tmp_path, env
        )
        assert found.strip() == "None", f"a bare install brings {name}"

    mutexlab = venv / "bin" / "mutexlab"
    out = _run(
        [mutexlab, "simulate", "mutex", "-a", "ricart-agrawala", "-N", "3", "-r", "2", "--trace", "t.jsonl"],
        tmp_path,
        env,
    )
    assert "audit: SAFE" in out
    assert "ricart-agrawala: SAFE" in _run([mutexlab, "verify", "t.jsonl"], tmp_path, env)
    _run([mutexlab, "report", "t.jsonl", "-o", "r.html"], tmp_path, env)
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    css = (ROOT / "shared/mutexlab/report/report.css").read_text(encoding="utf-8").strip().splitlines()[0]
    assert css in page and "<script>" in page  # the report's CSS and scripts, inlined from the package
    out = _run([mutexlab, "check", "mutex", "-a", "ricart-agrawala", "-N", "2", "-r", "1"], tmp_path, env)
    assert "verdict:      PASS" in out
    if shutil.which("cc") or shutil.which("gcc"):  # mutexlab's own MPI, built from the wheel's sources
        program = tmp_path / "ra"
        _run([mutexlab, "mpicc", ROOT / "examples/mpi/ricart_agrawala.c", "-o", program], tmp_path, env)
        assert program.exists()


def test_the_installed_explorer_serves_its_page(wheel, tmp_path):
    _, venv, _ = wheel
    proc = subprocess.Popen(
        [venv / "bin" / "mutexlab", "explore", "mutex", "-N", "2", "-r", "1", "--no-browser"],
        cwd=tmp_path,
        env=_clean_env(venv),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = [proc.stdout.readline() for _ in range(2)]
        assert lines[1].startswith("serving http://127.0.0.1:"), (lines, proc.poll())
        port = int(lines[1].split()[1].rstrip("/").rsplit(":", 1)[1])  # a free port, the explorer's choice
        for path, kind in [
            ("/", "text/html"),
            ("/explore.js", "javascript"),
            ("/explore.css", "text/css"),
            ("/dom.js", "javascript"),
        ]:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", path)
            response = conn.getresponse()
            body = response.read()
            conn.close()
            assert response.status == 200 and kind in response.getheader("Content-Type", ""), path
            assert body, path
        # docs/install.md#without-a-checkout: a wheel carries no examples/, so the menu is empty
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/api/examples")
        response = conn.getresponse()
        assert response.status == 200 and json.loads(response.read()) == []
        conn.close()
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            pytest.fail("the explorer did not stop on SIGINT: killed")
    assert proc.returncode == 0 and "Traceback" not in err, err[-2000:]
