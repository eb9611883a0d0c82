"""What the outsider tests share: a command's whole outcome for an assertion's message, and a
fixture solution of tests/outsiders/ edited into a variant under a name of its own."""

from __future__ import annotations

from pathlib import Path

OUTSIDERS = Path(__file__).resolve().parent / "outsiders"


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
