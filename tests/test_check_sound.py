"""``mutexlab check`` is sound by construction: a reduction applies only where the protocol's
spec declares it for the exact classes of every process (never inferred from a base class),
``check`` says what it applied and why, every counterexample any option writes replays to the
same violation; every check samples its declared reductions and refuses one whose sample
disagrees, and ``--cross-check`` reports a wrongly declared reduction the sampling missed as
unsound for the code, the search without reductions standing — shown for each kind of
reduction on a deliberately wrong declaration."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from conftest import broken

from mutexlab.check import engine, sampling
from mutexlab.check.engine import CheckConfig, run_check
from mutexlab.check.reductions import notes_of
from mutexlab.cli import main
from mutexlab.protocols import lamport, lamport_reductions, ricart_agrawala, ricart_agrawala_reductions
from mutexlab.reduction import Reductions

CLOCKS_8 = {"1": 8, "2": 8, "3": 8}
EIGHTS = 'initial_clocks={"1":8,"2":8,"3":8}'  # two-digit timestamps from the first reply on
TEXT = [
    "mutex",
    "-a",
    "mutexlab_broken.ricart_agrawala_text_stamps",
    "-N",
    "3",
    "--requests",
    "1",
    "-o",
    EIGHTS,
]


def run_json(argv, capsys) -> tuple[int, dict]:
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def notes(out: dict) -> dict[str, tuple[bool, str]]:
    return {n["reduction"]: (n["applied"], n["why"]) for n in out["reduction_notes"]}


# -- the text-stamp variant: found with the default settings, and the counterexample replays ----
def test_the_text_stamp_variant_is_found_by_default_and_its_counterexample_replays(tmp_path, capsys):
    scenario = tmp_path / "text.json"
    code, out = run_json(["check", *TEXT, "--counterexample", str(scenario)], capsys)
    assert code == 1 and out["findings"][0]["kind"] == "capacity", out["findings"]
    assert out["reproduced"][0], out["reproduced"]
    assert notes(out)["clock-offset normalisation"] == (False, "not declared by TextStampNode")
    assert notes(out)["partial-order reduction"][0]  # generic: needs no declaration
    code, replayed = run_json(["replay", str(scenario)], capsys)
    assert code == 1 and any("cs (capacity 1)" in v for v in replayed["violations"])


def test_the_text_stamp_variant_passed_only_under_a_clock_shift_it_never_declared(monkeypatch):
    """What went wrong before: Ricart–Agrawala's reductions applied to the subclass (as when
    classes were matched with isinstance) make the search pass."""
    options = {"requests": 1, "initial_clocks": CLOCKS_8}
    cls = broken("ricart_agrawala_text_stamps").TextStampNode
    monkeypatch.setattr(
        engine, "declared_for", lambda algorithm: [ricart_agrawala_reductions.REDUCTIONS.only(cls)]
    )
    config = CheckConfig("mutexlab_broken.ricart_agrawala_text_stamps", 3, options)
    caught, model = run_check(config)  # the sampling refuses the shift: the bug is found
    assert "clock-offset normalisation" not in model.reductions and caught.verdict == "violation"
    no_sampling(monkeypatch)
    wrong, model = run_check(config)
    assert "clock-offset normalisation" in model.reductions and wrong.verdict == "pass"


def no_sampling(monkeypatch) -> None:
    """Switch the sampling of declared reductions off (to show what it catches)."""
    monkeypatch.setattr(sampling, "FULL", 0)
    monkeypatch.setattr(sampling, "STRIDE", 10**18)
    monkeypatch.setattr(sampling, "MAX_TWINS", 0)


def test_the_text_output_says_what_was_applied_and_why(capsys):
    assert main(["check", *TEXT]) == 1
    text = capsys.readouterr().out
    assert "applied:      partial-order reduction — generic:" in text
    assert "not applied:  canonical snapshots — not declared by TextStampNode" in text
    assert main(["check", "mutex", "-a", "ricart-agrawala", "-N", "2"]) == 0
    text = capsys.readouterr().out
    assert "clock-offset normalisation — declared by RicartAgrawalaNode: timestamps are only compared" in text


# -- exact classes only ---------------------------------------------------------------------------
class PlainSubclass(ricart_agrawala.RicartAgrawalaNode):
    """Ricart–Agrawala unchanged: still a subclass, so still no reduction unless declared."""


def test_a_declaration_covers_exact_classes_only():
    node = ricart_agrawala.RicartAgrawalaNode(1, 2)
    sub = PlainSubclass(2, 2)
    assert ricart_agrawala_reductions.REDUCTIONS.covers(
        [node]
    ) and not ricart_agrawala_reductions.REDUCTIONS.covers([node, sub])
    assert ricart_agrawala_reductions.REDUCTIONS.only(PlainSubclass).covers([sub])
    with pytest.raises(ValueError, match="retired clocks extend"):
        Reductions(frozenset({PlainSubclass}), retired=ricart_agrawala_reductions.REDUCTIONS.retired)


def test_a_subclass_gets_no_reduction_until_it_declares_one(monkeypatch):
    from mutexlab_broken import recast

    from mutexlab.protocols.registry import make_setup

    def check():
        setup = recast(make_setup("ricart-agrawala", 3, {"requests": 1}), PlainSubclass)
        return run_check(CheckConfig("ricart-agrawala", 3, {"requests": 1}), setup=setup)

    result, model = check()
    assert model.reductions == ["partial-order reduction"]
    why = {n.name: n.why for n in notes_of(model)}
    assert why["canonical snapshots"] == "not declared by PlainSubclass"
    assert why["send bound"] == "not declared by PlainSubclass"
    monkeypatch.setattr(
        engine, "declared_for", lambda algorithm: [ricart_agrawala_reductions.REDUCTIONS.only(PlainSubclass)]
    )
    declared, model = check()
    assert model.reductions == [
        "canonical snapshots",
        "clock-offset normalisation",
        "retired clocks",
        "partial-order reduction",
    ]
    assert (result.verdict, declared.verdict) == ("pass", "pass") and declared.states == 1_690


def test_a_mixed_setup_names_the_class_that_declares_nothing(capsys):
    code, out = run_json(["check", "mutex", "-a", "mutexlab_broken.starving", "-N", "2"], capsys)
    applied, why = notes(out)["clock-offset normalisation"]
    assert code == 1 and not applied
    assert why.startswith("not declared by SelfishNode (RicartAgrawalaNode declares some")
    assert notes(out)["partial-order reduction"] == (False, notes(out)["partial-order reduction"][1])
    assert "dropped" in notes(out)["partial-order reduction"][1]


def test_faults_and_flags_say_why_a_reduction_is_off(capsys):
    _, out = run_json(["check", "mutex", "-a", "ricart-agrawala", "-N", "2", "--reorder"], capsys)
    assert notes(out)["clock-offset normalisation"][1].startswith("off with --reorder")
    assert notes(out)["canonical snapshots"][0]
    _, out = run_json(["check", "mutex", "-a", "lamport", "-N", "2", "--no-partial-order"], capsys)
    assert notes(out)["partial-order reduction"] == (False, "--no-partial-order")
    assert notes(out)["send bound"] == (False, "partial-order reduction is off")
    assert notes(out)["retired clocks"][0]  # declared by LamportNode (issue 41)
    _, out = run_json(["check", "mutex", "-a", "maekawa", "-N", "2"], capsys)
    assert notes(out)["retired clocks"] == (False, "not declared by MaekawaNode")
    _, out = run_json(["check", "mutex", "-a", "lamport", "-N", "2", "--no-reduction"], capsys)
    assert out["reduction_notes"] == [
        {"reduction": "every reduction", "applied": False, "why": "--no-reduction"}
    ]


# -- every counterexample any option writes replays to the same violation -------------------------
VARIANTS = [
    ["mutex", "-a", "mutexlab_broken.ricart_agrawala", "-N", "2"],
    ["mutex", "-a", "mutexlab_broken.ricart_agrawala_eager", "-N", "2"],
    ["mutex", "-a", "mutexlab_broken.ricart_agrawala_forgetful", "-N", "2"],
    ["mutex", "-a", "mutexlab_broken.ricart_agrawala_greedy_quiet", "-N", "2"],
    ["mutex", "-a", "mutexlab_broken.ricart_agrawala_proud", "-N", "2"],
    ["mutex", "-a", "mutexlab_broken.ricart_agrawala_rejecting", "-N", "2"],
    ["mutex", "-a", "mutexlab_broken.starving", "-N", "2"],
    TEXT,
    ["mutex", "-a", "mutexlab_broken.lamport_text_stamps", "-N", "2", "-o", 'initial_clocks={"1":8,"2":8}'],
    ["mutex", "-a", "mutexlab_broken.lamport_text_stamps", "-N", "3", "-o", EIGHTS],
    ["bees", "-P", "3", "-T", "3", "--algorithm", "mutexlab_broken.bees"],
    ["bees", "--algorithm", "mutexlab_broken.bees_extra_egg"],
]
# correct protocols: a finding only under faults they do not claim to survive
CORRECT = [
    ["mutex", "-a", "ricart-agrawala", "-N", "2"],
    ["mutex", "-a", "lamport", "-N", "2"],
    ["mutex", "-a", "suzuki-kasami", "-N", "2"],
    ["bees"],
]
OPTIONS = [
    [],
    ["--no-partial-order"],
    ["--no-reduction"],
    ["--reorder"],
    ["--duplicate", "1"],
    ["--search", "bfs"],
    ["--endless"],  # check mutex only; refused up front (exit 2) where its worlds are infinite
]


def _id(argv) -> str:
    return "-".join(a.split(".")[-1] for a in argv if not a.startswith("-") and not a.startswith("{"))[:60]


def same_violation(finding: dict, replayed: dict) -> bool:
    """Does the replay (``replay --json``) show ``check``'s finding: the same kind, resource and
    processes?"""
    who = finding["processes"]
    if finding["kind"] == "deadlock":
        return set(who) <= set(replayed["deadlock"])
    if finding["kind"] == "error":
        return bool(replayed["refused"]) and finding["message"].split(": ", 1)[-1] in replayed["refused"]
    if finding["kind"] == "liveness":
        loop = replayed.get("loop") or {}
        return bool(loop.get("closes")) and set(who) <= set(loop["waiting"])
    resource = finding.get("resource", "")
    return any(resource in v and all(p in v for p in who) for v in replayed["violations"])


CASES = [(a, o) for a in VARIANTS + CORRECT for o in OPTIONS if o != ["--endless"] or a[0] == "mutex"]
# The costliest cases (0.2-0.6 CPU-s each) for the full run only; every variant and every option
# stays in the quick subset through the others.
QUICK_LEAVES_OUT = {
    f"test_every_counterexample_any_option_writes_replays_to_the_same_violation[{case}]"
    for case in (
        "bees-3-3-bees-search-bfs",
        "bees-duplicate-1",
        "mutex-ricart_agrawala_eager-2-endless",
        "mutex-ricart_agrawala_greedy_quiet-2-endless",
        "mutex-suzuki-kasami-2-endless",
        'mutex-ricart_agrawala_text_stamps-3-1-initial_clocks={"1":8,-endless',
    )
}


@pytest.mark.parametrize(
    "argv, options", CASES, ids=[f"{_id(a)}-{'-'.join(o).strip('-') or 'default'}" for a, o in CASES]
)
def test_every_counterexample_any_option_writes_replays_to_the_same_violation(
    argv, options, tmp_path, capsys
):
    scenario = tmp_path / "found.json"
    code = main(["check", *argv, *options, "--json", "--counterexample", str(scenario)])
    captured = capsys.readouterr()
    if code == 2 and options == ["--endless"]:
        assert "the worlds of this workload are infinite" in captured.err, captured.err
        return
    out = json.loads(captured.out)
    if argv in CORRECT and code == 0:
        assert not scenario.exists() and out["verdict"] == "pass"
        return
    assert code == 1, (out["verdict"], out["stopped"])  # a broken variant is always caught
    finding = out["findings"][0]
    assert out["reproduced"][0], out["reproduced"]
    code, replayed = run_json(["replay", str(scenario)], capsys)
    assert code == 1 and same_violation(finding, replayed), (finding, replayed)


# -- --cross-check: agreement on sound declarations, an error of the tool on wrong ones -----------
def test_the_cross_check_agrees_on_the_declared_reductions(capsys):
    code, out = run_json(["check", "mutex", "-a", "ricart-agrawala", "-N", "3", "--cross-check"], capsys)
    assert code == 0 and out["cross_check"]["agrees"] is True
    assert (out["states"], out["cross_check"]["states"]) == (1_690, 13_474)
    code, out = run_json(["check", "elves", "--cross-check"], capsys)
    assert code == 0 and out["cross_check"]["agrees"] is True and out["cross_check"]["states"] == 512
    code, out = run_json(["check", *VARIANTS[3], "--cross-check"], capsys)
    assert code == 1 and out["cross_check"]["agrees"] is True and out["verdict"] == "violation"


def test_an_incomplete_cross_check_confirms_nothing(capsys):
    """Lamport N=2 × 2: 248 worlds with reductions, 1,453 without: a limit of 1,000 stops only
    the plain search, and the pass is not confirmed (exit 3)."""
    argv = ["check", "mutex", "-a", "lamport", "-N", "2", "--requests", "2", "--max-states", "1000"]
    code, out = run_json([*argv, "--cross-check"], capsys)
    assert out["verdict"] == "pass" and out["cross_check"]["agrees"] is None and code == 3
    assert "state limit" in out["cross_check"]["why"]


WRONG = ["mutex", "-a", "mutexlab_broken.{}", "-N", "3", "--requests", "1"]


def wrong(module: str) -> list[str]:
    return [a.format(module) for a in WRONG]


RA = ricart_agrawala_reductions.REDUCTIONS


WRONGLY_DECLARED = [
    ("ricart_agrawala_text_stamps_shifted", ["-o", EIGHTS], {"clocks": None, "retired": None}),
    ("ricart_agrawala_wrong_key", [], {"canonical": RA.canonical}),
    ("ricart_agrawala_wrong_retirement", [], {"retired": None}),
    ("ricart_agrawala_wrong_bound", [], {"sends": RA.sends}),
]
REFUSED = {  # the reduction each wrong declaration gets refused by the sampling
    "ricart_agrawala_text_stamps_shifted": "clock-offset normalisation",
    "ricart_agrawala_wrong_key": "canonical snapshots",
    "ricart_agrawala_wrong_retirement": "retired clocks",
    "ricart_agrawala_wrong_bound": "send bound",
}
KINDS = ["clock-shift", "canonical", "retired-clocks", "send-bound"]


def verdict_of(out: dict) -> tuple:
    return out["verdict"], [(f["kind"], sorted(f["processes"])) for f in out["findings"]][:1]


@pytest.mark.parametrize("module, extra, right", WRONGLY_DECLARED, ids=KINDS)
def test_the_sampling_refuses_each_wrongly_declared_reduction(module, extra, right, monkeypatch, capsys):
    """Each kind of reduction, declared where it is not sound: a plain ``check`` samples it on
    the worlds it visits, refuses it saying why, and reaches the verdict of the search without
    reductions. With the one wrong declaration put right, nothing is refused."""
    name = REFUSED[module]
    code, out = run_json(["check", *wrong(module), *extra], capsys)
    applied, why = notes(out)[name]
    assert not applied and why.startswith("refused: "), why
    plain_code, plain = run_json(["check", *wrong(module), *extra, "--no-reduction"], capsys)
    assert (code, verdict_of(out)) == (plain_code, verdict_of(plain))
    assert main(["check", *wrong(module), *extra]) == code
    assert f"{name} — refused: " in capsys.readouterr().out
    mod = broken(module)
    monkeypatch.setattr(mod, "SPEC", replace(mod.SPEC, reductions=replace(mod.SPEC.reductions, **right)))
    _, out = run_json(["check", *wrong(module), *extra], capsys)
    assert not [n for n in out["reduction_notes"] if n["why"].startswith("refused")], out["reduction_notes"]


@pytest.mark.parametrize("module, extra, right", WRONGLY_DECLARED, ids=KINDS)
def test_a_wrong_declaration_the_sampling_missed_leaves_the_plain_verdict(
    module, extra, right, monkeypatch, tmp_path, capsys
):
    """With the sampling off, the reduced search passes a bug (clock shift, send bound) or
    reports one that does not replay (canonical key, retired clocks). The cross-check says the
    reductions were unsound for this code and the search without them stands: its finding is
    the verdict (exit 1, its counterexample written and replaying), its pass a pass (exit 0) —
    never exit 4. With the one wrong declaration put right, the two searches agree."""
    no_sampling(monkeypatch)
    argv = ["check", *wrong(module), *extra, "--cross-check", "--counterexample", str(tmp_path / "c.json")]
    code, out = run_json(argv, capsys)
    cross = out["cross_check"]
    assert cross["agrees"] is False and cross["reductions_unsound"], cross
    assert out["verdict"] == cross["verdict"] and code == (1 if cross["verdict"] == "violation" else 0)
    assert main(["check", *wrong(module), *extra, "--cross-check"]) == code
    text = capsys.readouterr().out
    assert "cross-check:  DISAGREES" in text and "reductions:   UNSOUND for this code" in text
    if cross["verdict"] == "violation":  # the real finding, written and replaying
        assert out["counterexample_of"] == "the search without reductions" and out["reproduced"][0]
    mod = broken(module)
    monkeypatch.setattr(mod, "SPEC", replace(mod.SPEC, reductions=replace(mod.SPEC.reductions, **right)))
    code, out = run_json(["check", *wrong(module), *extra, "--cross-check"], capsys)
    assert out["cross_check"]["agrees"] is True and code in (0, 1), out["cross_check"]
    assert len(out["reductions"]) >= 2  # the other declared reductions still apply


# -- the declared parts: the class is not all of the code ------------------------------------------
WRAP = ["mutex", "-a", "mutexlab_broken.ricart_agrawala_wrapping_clock", "-N", "3", "-o", EIGHTS]


def test_a_node_of_the_declared_class_with_another_clock_gets_no_reduction(capsys):
    """``RicartAgrawalaNode`` itself, its clock replaced by one that wraps at 10: Ricart–Agrawala's
    reductions used to apply (class matched) and the reduced search passed; now the clock is not
    the declared part, every declared reduction is off saying so, and all three ways agree on
    the violation."""
    code, out = run_json(["check", *WRAP], capsys)
    assert code == 1 and out["verdict"] == "violation", out["verdict"]
    for name in ("canonical snapshots", "clock-offset normalisation", "retired clocks", "send bound"):
        applied, why = notes(out)[name]
        assert not applied and "clock is a WrappingClock, not the declared LamportClock" in why, why
    assert main(["check", *WRAP, "--no-reduction"]) == 1
    capsys.readouterr()
    code, out = run_json(["check", *WRAP, "--cross-check"], capsys)
    assert code == 1 and out["cross_check"]["agrees"] is True


def test_an_undeclared_attribute_or_a_part_changed_later_turns_the_reductions_off():
    setup = ricart_agrawala.make_setup(2, {"requests": 1})
    assert RA.strange(setup.protocols) is None
    setup.protocols[1].shortcut = lambda: None  # an instance's own code
    assert RA.strange(setup.protocols, setup.names) == (
        "node-1's attribute 'shortcut' is not among the declared parts"
    )
    odd = ricart_agrawala.RicartAgrawalaNode(1, 2)
    odd.clock = 3  # type: ignore[assignment]
    with pytest.raises(sampling.Refused) as refused:  # a part changed once the search is under way
        engine.build_model(CheckConfig("ricart-agrawala", 2, {"requests": 1})).sampler.new_state(odd)
    assert "clock is a int, not the declared LamportClock" in str(refused.value)


def test_the_sampling_refuses_nothing_and_changes_no_count_on_the_correct_protocols(monkeypatch, capsys):
    configs = [
        ["mutex", "-a", "ricart-agrawala", "-N", "3"],
        ["mutex", "-a", "lamport", "-N", "2", "--requests", "2"],
        ["mutex", "-a", "ricart-agrawala", "-N", "2", "--endless"],
        ["bees"],
        ["elves"],
    ]

    def counts() -> list[tuple]:
        got = []
        for argv in configs:
            _, out = run_json(["check", *argv, "--quiet"], capsys)
            refused = [n for n in out["reduction_notes"] if n["why"].startswith(("refused", "off:"))]
            assert not refused, refused
            got.append((out["verdict"], out["states"], out["transitions"]))
        return got

    sampled = counts()
    assert sampled[0] == ("pass", 1_690, 3_364) and sampled[4][:2] == ("pass", 246)
    no_sampling(monkeypatch)
    assert counts() == sampled


def test_lamport_declares_all_four_for_its_exact_class_only():
    """Since issue 41 (docs/check.md#reductions; tests/test_check_lamport_reductions.py)."""
    declared = lamport_reductions.REDUCTIONS
    assert None not in (declared.canonical, declared.clocks, declared.retired, declared.sends)
    assert declared.classes == frozenset({lamport.LamportNode})


# -- a refusal met after the check: --metrics and --swarm search again, never a tool error ---------
SHIFTED = [*wrong("ricart_agrawala_text_stamps_shifted"), "-o", EIGHTS]


def test_a_reduction_refused_by_the_figures_search_restarts_check_and_figures(monkeypatch, capsys):
    """The check's own sampling is off, so its reduced search passes the text-stamp bug under the
    clock shift; the figures' search then samples (as it does the worlds the check's did not)
    and refuses the shift. --metrics used to end there (TOOL ERROR, exit 4); now, as the plain
    check, both search again without it: the violation is found (exit 1), the figures not
    computed for it."""
    full, stride, twins = sampling.FULL, sampling.STRIDE, sampling.MAX_TWINS
    no_sampling(monkeypatch)
    from mutexlab.check import metrics

    real = metrics.search_metrics
    sampled: list[int] = []

    def sampling_from_here(model, *args, **kwargs):
        monkeypatch.setattr(sampling, "FULL", full)
        monkeypatch.setattr(sampling, "STRIDE", stride)
        monkeypatch.setattr(sampling, "MAX_TWINS", twins)
        if model.sampler is not None:
            model.sampler.next_at = 1
            sampled.append(1)
        return real(model, *args, **kwargs)

    monkeypatch.setattr(metrics, "search_metrics", sampling_from_here)
    code, out = run_json(["check", *SHIFTED, "--metrics"], capsys)
    assert sampled, "the figures' search was never given a sampled model"
    assert code == 1 and out["verdict"] == "violation", out["verdict"]
    applied, why = notes(out)["clock-offset normalisation"]
    assert not applied and why.startswith("refused: "), why
    assert out["metrics"]["stopped"] == "not computed: the check found a violation"


@pytest.mark.parametrize(
    "module, extra, name",
    [
        ("ricart_agrawala_wrong_key", [], "canonical snapshots"),
        ("ricart_agrawala_wrong_retirement", [], "retired clocks"),
    ],
)
def test_a_reduction_a_swarm_worker_refuses_is_dropped_not_a_tool_error(module, extra, name, capsys):
    """A worker's sample refuses the reduction: it used to die unreported (TOOL ERROR, exit 4);
    now its next searches go without it, and the swarm says so (5: nothing found, never a pass)."""
    code, out = run_json(
        ["check", *wrong(module), *extra, "--swarm", "--time", "3", "--workers", "2"], capsys
    )
    assert code == 5 and out["verdict"] == "not-found" and not out["errors"], out
    assert name in out["reductions_refused"], out["reductions_refused"]
    main(["check", *wrong(module), *extra, "--swarm", "--time", "2", "--workers", "1"])
    assert f"refused:      {name} — " in capsys.readouterr().out


def test_a_swarm_finds_the_bug_a_refused_clock_shift_would_hide(capsys):
    code, out = run_json(["check", *SHIFTED, "--swarm", "--time", "20", "--workers", "2"], capsys)
    assert code == 1 and out["verdict"] == "violation" and not out["errors"], out
    assert "clock-offset normalisation" in out["reductions_refused"]
    assert out["reproduced"][0], out["reproduced"]
