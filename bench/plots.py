"""The plots of BENCHMARKS.md, drawn as SVG from the recorded results in docs/.

    python -m bench.plots            # rewrite docs/bench-*.svg from docs/benchmarks-*.json
    python -m bench.plots --check    # exit 1 when a committed plot is not what the files give

Plain SVG written here, no plotting library: the same results always give the same bytes, so
a test can tell a stale plot from a current one.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from functools import partial
from html import escape
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"
COLOURS = ["#2b6cb0", "#90cdf4", "#dd6b20", "#38a169", "#805ad5"]
W, LEFT, RIGHT, TOP, ROW = 760, 250, 90, 34, 20
MIDDLE = ' text-anchor="middle"'
_esc = partial(escape, quote=False)  # &, < and > only


def _num(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def _ticks(top: float) -> list[float]:
    """Round ticks from 0 to at least ``top``: 1, 2 or 5 times a power of ten apart."""
    power = 10 ** math.floor(math.log10(top / 5))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= top / 5)
    return [i * step for i in range(math.ceil(top / step) + 1)]


def _text(x: float, y: float, text: str, extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}"{extra}>{_esc(text)}</text>'


def _line(x1: float, y1: float, x2: float, y2: float, extra: str = ' stroke="#ddd"') -> str:
    return f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}"{extra}/>'


def _svg(bottom: float, title: str, body: list[str], legend: list[str]) -> str:
    """The document: ``body`` above ``bottom``, the legend below it, flowing onto more lines."""
    keys, x, y = [], 20.0, bottom + 8
    for i, name in enumerate(legend):
        width = 24 + 6.6 * len(name)
        if x + width > W - 10:
            x, y = 20.0, y + 18
        keys.append(f'<rect x="{x:.0f}" y="{y:.0f}" width="10" height="10" fill="{COLOURS[i]}"/>')
        keys.append(f'<text x="{x + 14:.0f}" y="{y + 9:.0f}">{_esc(name)}</text>')
        x += width
    height = y + 22
    return "\n".join(
        [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height:.0f}" '
            f'viewBox="0 0 {W} {height:.0f}" font-family="sans-serif" font-size="12">',
            f'<rect width="{W}" height="{height:.0f}" fill="white"/>',
            f'<text x="{W / 2}" y="18" text-anchor="middle" font-size="14">{_esc(title)}</text>',
            *body,
            *keys,
            "</svg>\n",
        ]
    )


def bars(title: str, unit: str, rows: list[tuple[str, list[float | None]]], legend: list[str]) -> str:
    """Horizontal bars, one row per label; a row's values (one per legend entry) are stacked, a
    None leaves its segment out. A label starting with "·" is a group heading without a bar."""
    top = max(sum(v or 0 for v in values) for _, values in rows)
    ticks = _ticks(top)
    scale = (W - LEFT - RIGHT) / ticks[-1]
    plot_h = ROW * len(rows)
    body = []
    for t in ticks:
        x = LEFT + t * scale
        body += [_line(x, TOP, x, TOP + plot_h), _text(x, TOP + plot_h + 14, _num(t), MIDDLE)]
    for i, (label, values) in enumerate(rows):
        y = TOP + i * ROW
        heading = label.startswith("·")
        weight = ' font-weight="bold"' if heading else ""
        body.append(_text(LEFT - 6, y + 14, label.lstrip("·"), ' text-anchor="end"' + weight))
        x = float(LEFT)
        for k, value in enumerate(values):
            if value:
                body.append(
                    f'<rect x="{x:.1f}" y="{y + 3}" width="{value * scale:.1f}" height="{ROW - 6}" '
                    f'fill="{COLOURS[k]}"><title>{_esc(legend[k])}: {_num(value)}</title></rect>'
                )
                x += value * scale
        if not heading:
            body.append(_text(x + 4, y + 14, _num(sum(v or 0 for v in values))))
    body.append(_text(W - RIGHT, TOP + plot_h + 30, unit, ' text-anchor="end"'))
    return _svg(TOP + plot_h + 38, title, body, legend)


def lines(title: str, unit: str, series: dict[str, list[tuple[float, float]]], target: float) -> str:
    """Points joined per series against x on a log scale; a dashed line at ``target``."""
    xs = [x for points in series.values() for x, _ in points]
    lo, hi = math.log10(min(xs)), math.log10(max(xs))
    ticks = _ticks(max(y for points in series.values() for _, y in points))
    plot_h = 220
    sx = lambda x: LEFT - 170 + (math.log10(x) - lo) / (hi - lo) * (W - LEFT + 120)  # noqa: E731
    sy = lambda y: TOP + plot_h - y / ticks[-1] * plot_h  # noqa: E731
    body = []
    x0, x1 = sx(min(xs)), sx(max(xs))
    for t in ticks:
        body += [_line(x0, sy(t), x1, sy(t)), _text(x0 - 6, sy(t) + 4, _num(t), ' text-anchor="end"')]
    body += [_text(sx(x), TOP + plot_h + 14, f"{x:g}", MIDDLE) for x in sorted(set(xs))]
    body.append(_line(x0, sy(target), x1, sy(target), ' stroke="#e53e3e" stroke-dasharray="6 4"'))
    body.append(_text(x0 + 4, sy(target) - 4, f"target {_num(target)}", ' fill="#e53e3e"'))
    for k, points in enumerate(series.values()):
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in points)
        body.append(f'<polyline points="{path}" fill="none" stroke="{COLOURS[k]}" stroke-width="2"/>')
        for x, y in points:
            body.append(
                f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="4" fill="{COLOURS[k]}"><title>{_num(y)}</title></circle>'
            )
    body.append(_text(W / 2, TOP + plot_h + 32, unit, MIDDLE))
    return _svg(TOP + plot_h + 40, title, body, list(series))


def _load(name: str) -> dict:
    return json.loads((DOCS / name).read_text(encoding="utf-8"))


def simulator() -> str:
    cases = _load("benchmarks-full.json")["parts"]["2"]["cases"]
    big = next(r for r in _load("benchmarks-scale.json")["table"] if r["P"] == 1000)
    per_cpu = lambda run: big["messages"] / big[run]["cpu"]  # noqa: E731
    series = {
        "bees, K = 3": [(c["processes"], c["msgs_per_cpu_s"]) for c in cases if c["algorithm"] == "bees"],
        "Ricart–Agrawala": [(c["processes"], c["msgs_per_cpu_s"]) for c in cases if c["algorithm"] != "bees"],
        "bees, K = P/10, --no-audit": [(1000, per_cpu("no_audit"))],
        "bees, K = P/10, audited": [(1000, per_cpu("audited"))],
    }
    return lines("Simulated messages per CPU-second, tracing off", "processes P (log scale)", series, 100_000)


def check() -> str:
    tools = ["SPIN", "mutexlab check --no-reduction", "mutexlab check (reductions)"]
    rows: list[tuple[str, list[float | None]]] = []
    for r in _load("benchmarks-check.json")["rows"]:  # grouped by configuration
        if f"·{r['configuration']}" not in (label for label, _ in rows):
            rows.append((f"·{r['configuration']}", [None]))
        rows.append((r["tool"], [None] * tools.index(r["tool"]) + [r["states_per_s"]]))
    return bars("State-space search, states per second (same worlds)", "states per second", rows, tools)


def wire() -> str:
    sitting = _load("benchmarks-wire.json")["sittings"][0]
    rows: list[tuple[str, list[float | None]]] = []
    for r in (r for r in sitting["rows"] if r["n"] == 5):
        names = {"mutexlab": f"mutexlab {r['algorithm']}", "ring": f"raw pika ring, {r['what']}"}
        label = names.get(r["kind"], f"DistAlgo {r['what']}")
        rows.append((label, [r.get("broker_us_per_msg"), r.get("python_us_per_msg")]))
    legend = ["broker (RabbitMQ) CPU", "Python CPU (every process)"]
    return bars("CPU per protocol message (per hop for the ring), N = 5", "µs of CPU", rows, legend)


PLOTS = {"bench-simulator.svg": simulator, "bench-check.svg": check, "bench-wire.svg": wire}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.plots", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    stale = []
    for name, draw in PLOTS.items():
        path, svg = DOCS / name, draw()
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != svg:
                stale.append(name)
        else:
            path.write_text(svg, encoding="utf-8")
            print(f"wrote {path}")
    if stale:
        print(f"stale (run python -m bench.plots): {', '.join(stale)}", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
