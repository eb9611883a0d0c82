"""What the outsider tests share: a command's whole outcome for an assertion's message, a
fixture solution of tests/outsiders/ edited into a variant under a name of its own, and
``mutexlab explore`` driven over its JSON API."""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys
from pathlib import Path

OUTSIDERS = Path(__file__).resolve().parent / "outsiders"
SHARED = str(Path(__file__).resolve().parents[1] / "shared")


def said(done) -> str:
    return f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"


def edited(
    where: Path, fixture: str, algorithm: str, prefix: str, name: str, *edits: tuple[str, str]
) -> Path:
    """``fixture`` (a file of tests/outsiders/) with each (old, new) of ``edits`` made and its
    ``algorithm`` name made ``prefix-name``, saved as ``name``.py under ``where``."""
    text = (OUTSIDERS / fixture).read_text()
    for old, new in ((f'"{algorithm}"', f'"{prefix}-{name}"'), *edits):
        assert old in text, old
        text = text.replace(old, new)
    path = where / f"{name}.py"
    path.write_text(text)
    return path


class Explorer:
    """``mutexlab explore PROBLEM -a FILE --no-browser --port 0`` in a process of its own, elsewhere
    (the file's modules beside it found by its path alone), driven over its JSON API."""

    def __init__(self, cwd: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mutexlab", "explore", *args, "--no-browser", "--port", "0"],
            cwd=cwd, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": SHARED}, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.banner = self.proc.stdout.readline()
        serving = self.proc.stdout.readline()
        assert serving.startswith("serving http://"), self.banner + serving + self.proc.stderr.read()
        host, port = serving.split()[1][len("http://") :].rstrip("/").split(":")
        self.host, self.port = host, int(port)

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
        data = None if body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
        response = conn.getresponse()
        payload = json.loads(response.read())
        conn.close()
        assert response.status == 200, payload
        return payload

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        self.proc.communicate(timeout=60)
        return self.proc.returncode
