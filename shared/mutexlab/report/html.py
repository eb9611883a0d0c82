"""``build_report(events) -> str``: one self-contained HTML page for a trace (``write_report``
writes it to a file).

The page holds its data (the view model of ``model.py``) as inline JSON, and its own CSS and
script (``report.css``, ``dom.js`` and ``report.js``, package data) inline: no external script, font, image or
URL, so it opens offline. The script draws a windowed space-time diagram (at most
``MAX_ARROWS`` arrows at once; the rest are counted, never silently dropped) and writes what it
drew into ``<pre id="selfcheck">`` so tests can check the rendered page.
"""

from __future__ import annotations

import html
import json
from importlib import resources
from pathlib import Path

from ..audit.stall import explain_stall
from ..audit.verdict import Verdict
from ..trace import TraceError
from .model import build_model
from .window import Window

MAX_ARROWS = 2000


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def _json_for_script(data: object) -> str:
    """JSON that cannot end the surrounding <script> element early."""
    try:
        text = json.dumps(data, separators=(",", ":"), allow_nan=False, default=str)
    except ValueError as exc:  # NaN or infinity: JSON (and the page) cannot carry them
        raise TraceError(f"the trace holds a number the page cannot show: {exc}") from None
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def build_report(
    events: list[dict],
    title: str | None = None,
    stalled: dict | None = None,
    states: dict | None = None,
    window: Window | None = None,
    verdict: Verdict | None = None,
) -> str:
    """The report page for ``events`` (a whole trace, run header first). Raises TraceError.

    ``stalled`` (``SimResult.stalled``: who waits for what from whom) and ``states`` (final
    state per process), when the run ended stuck, put the stall explanation under the verdict.
    ``window``: a trace file read as a stream (``read_window``), drawn in part; ``events`` are
    then its events.
    """
    if window is not None:
        model = build_model(window.events, window.verdict, window.note())
    else:
        model = build_model(events, verdict)
    model["max_arrows"] = MAX_ARROWS
    model["stall"] = explain_stall(stalled, states) if stalled else ""
    heading = title or f"mutexlab report — {model['title']}"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(heading)}</title>
<script>
window.__errors = [];
window.addEventListener("error", function (e) {{ window.__errors.push(String(e.message || e)); }});
(function () {{ var orig = console.error; console.error = function () {{
  window.__errors.push(Array.prototype.map.call(arguments, String).join(" ")); return orig.apply(console, arguments); }}; }})();
</script>
<style>
{_asset("report.css")}
</style>
</head>
<body>
<h1>{html.escape(heading)}</h1>
<div class="sub" id="summary"></div>
<div class="sub" id="window" hidden></div>
<section id="verdict"></section>
<section id="stall" hidden></section>
<h2>Space-time diagram</h2>
<div id="controls">
  <span>x axis: <label><input type="radio" name="axis" value="t" checked> time t</label>
  <label><input type="radio" name="axis" value="lamport"> Lamport clock</label></span>
  <button id="zin" title="zoom in">+ zoom in</button> <button id="zout" title="zoom out">− zoom out</button>
  <button id="fit" title="the whole trace">fit all</button>
  <label>focus <select id="focus" title="only the arrows to and from one process"><option value="">every process</option></select></label>
  <span>window <input id="wfrom" type="number" step="any"> → <input id="wto" type="number" step="any"></span>
  <span class="help">wheel: zoom · drag: pan · hover: details · legend: show or hide a message type ·
  an arrow ending on the right edge is received later or still in flight (dashed)</span>
</div>
<div id="legend" class="legend"></div>
<div id="note"></div>
<svg id="diagram" xmlns="http://www.w3.org/2000/svg"></svg>
<h2>Occupancy over time <span class="help">(in time t, over the diagram's time window)</span></h2>
<div id="occupancy"></div>
<h2>Message statistics</h2>
<div id="stats" class="stats-wrap"></div>
<div id="tip"></div>
<pre id="selfcheck" hidden></pre>
<script type="application/json" id="data">{_json_for_script(model)}</script>
<script>
{_asset("dom.js")}
{_asset("report.js")}
</script>
</body>
</html>
"""


def write_report(
    events: list[dict],
    path: str | Path,
    stalled: dict | None = None,
    states: dict | None = None,
    window: Window | None = None,
    verdict: Verdict | None = None,
) -> Path:
    """Build the report of ``events`` (or of ``window``, see ``build_report``) and write it to
    ``path``; OSError/TraceError propagate."""
    page = build_report(events, stalled=stalled, states=states, window=window, verdict=verdict)
    target = Path(path)
    target.write_text(page, encoding="utf-8")
    return target
