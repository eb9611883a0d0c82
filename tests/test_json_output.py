"""``--json`` writes JSON every reader loads (``commands/common.print_json``): no ``NaN`` or
``Infinity`` (Python's ``json`` writes them, a strict reader refuses them), no crash on a key
JSON cannot hold (a tuple), and ``simulate --json`` loads back strictly."""

from __future__ import annotations

import json
import math

from mutexlab.commands import common


def strict(text: str):
    """``text`` read as JSON proper: NaN, Infinity and -Infinity refused."""

    def refuse(constant: str):
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_what_strict_json_cannot_hold_is_written_so_a_reader_loads_it(capsys):
    common.print_json(
        {
            "mean": math.nan,
            "worst": math.inf,
            "best": -math.inf,
            "ok": 1.5,
            (1, 2): [(3, math.nan)],
            math.inf: 1,
        }
    )
    assert strict(capsys.readouterr().out) == {
        "mean": None,
        "worst": None,
        "best": None,
        "ok": 1.5,
        "(1, 2)": [[3, None]],
        "inf": 1,
    }


def test_simulate_json_loads_back_strictly(cli):
    ran = cli("simulate", "mutex", "-a", "ricart-agrawala", "-N", "3", "--json")
    assert ran.returncode == 0, ran.stderr
    summary = strict(ran.stdout)
    assert summary["entries"] == 9 and summary["nodes"] == 3
