"""``explore --scenario FILE`` runs the algorithm file a scenario names only when ``--algorithm``
names it on the command line, as ``replay`` (and the explorer's ``POST /api/scenario``) do: a
scenario is data, and loading the file it names would run whatever that file holds. It loaded it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "protocols"


def test_a_scenario_naming_a_file_is_refused_without_algorithm(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # the file would announce itself if it were ever loaded
    source = (EXAMPLES / "carvalho_roucairol_broken.py").read_text()
    (tmp_path / "mine.py").write_text(source + "\nopen('LOADED', 'w').close()\n")
    shutil.copy(EXAMPLES / "carvalho_roucairol_broken.py", tmp_path / "plain.py")
    done = cli(
        "check",
        "mutex",
        "--algorithm",
        "./plain.py",
        "-N",
        "2",
        "--requests",
        "2",
        "--counterexample",
        "ce.json",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    scenario = json.loads((tmp_path / "ce.json").read_text())
    scenario["algorithm"] = "mine.py"  # a scenario from elsewhere, naming another file
    (tmp_path / "ce.json").write_text(json.dumps(scenario))
    refused = cli("explore", "mutex", "--scenario", "ce.json", "--no-browser", "--port", "0")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert (
        "ce.json names the algorithm file mine.py: explore runs only registered algorithms" in refused.stderr
    )
    assert "pass --algorithm mine.py" in refused.stderr
    assert not (tmp_path / "LOADED").exists(), "the file the scenario names was run"
