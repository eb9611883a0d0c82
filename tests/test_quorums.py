"""Maekawa's quorums: the constructions keep the notes' conditions; bad sets are refused by name."""

import math
from collections import Counter
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mutexlab.protocols import quorums as qs
from mutexlab.protocols.registry import make_setup
from mutexlab.setups import ConfigError


def _intersecting_with_owners(sets, n):
    assert sorted(sets) == list(range(1, n + 1))
    for i, members in sets.items():
        assert i in members, f"{i} not in its own set {members}"
        assert all(1 <= m <= n for m in members)
    for i, j in combinations(sets, 2):
        assert set(sets[i]) & set(sets[j]), f"sets of {i} and {j} are disjoint"


def test_plane_order_recognises_q_squared_plus_q_plus_one_with_q_prime():
    assert [n for n in range(1, 200) if qs.plane_order(n) is not None] == [7, 13, 31, 57, 133, 183]
    assert qs.plane_order(21) is None  # q = 4 is not prime
    assert qs.plane_order(3) is None  # q = 1 is not prime


@pytest.mark.parametrize("n, q", [(7, 2), (13, 3), (31, 5), (57, 7)])
def test_projective_plane_is_a_symmetric_design(n, q):
    sets = qs.plane(n)
    _intersecting_with_owners(sets, n)
    assert {len(s) for s in sets.values()} == {q + 1}  # K = q+1
    assert all(len(set(a) & set(b)) == 1 for a, b in combinations(sets.values(), 2))  # lines meet once
    assert len({tuple(s) for s in sets.values()}) == n  # every line used once
    load = Counter(m for s in sets.values() for m in s)
    assert set(load.values()) == {q + 1}  # each process in K sets


def test_projective_plane_for_seven_processes():
    assert qs.plane(7) == {
        1: (1, 4, 6),
        2: (1, 2, 7),
        3: (3, 4, 7),
        4: (2, 4, 5),
        5: (1, 3, 5),
        6: (2, 3, 6),
        7: (5, 6, 7),
    }


def test_plane_refuses_a_size_that_has_no_plane():
    with pytest.raises(ConfigError, match="N = 8 is not"):
        qs.plane(8)


def test_grid_sets_intersect_and_hold_their_owner_for_every_n_up_to_80():
    for n in range(1, 81):
        sets = qs.grid(n)
        _intersecting_with_owners(sets, n)
        assert max(len(s) for s in sets.values()) <= 2 * math.ceil(math.sqrt(n)) - 1


def test_grid_of_five_is_row_and_column_on_a_short_last_row():
    # 1 2 3
    # 4 5
    assert qs.grid(5) == {1: (1, 2, 3, 4), 2: (1, 2, 3, 5), 3: (1, 2, 3), 4: (1, 4, 5), 5: (2, 4, 5)}


def test_default_is_the_plane_when_it_exists_and_the_grid_otherwise():
    assert qs.default(13)[0] == "plane"
    assert qs.default(12) == ("grid", qs.grid(12))
    assert make_setup("maekawa", 7).params["quorums"] == "plane"
    assert make_setup("maekawa", 8).params["quorums"] == "grid"
    assert make_setup("maekawa", 7, {"quorums": "grid"}).protocols[1].asks == qs.grid(7)[1]


@pytest.mark.parametrize(
    "sets, words",
    [
        ({"1": [1, 2], "2": [2, 3], "3": [3]}, "sets of 1 \\[1, 2\\] and 3 \\[3\\] do not intersect"),
        ({"1": [1, 2], "2": [1, 3], "3": [1, 3]}, "the set of 2 \\[1, 3\\] does not contain 2 itself"),
        ({"1": [1, 2], "2": [1, 2]}, "no set for process\\(es\\) 3"),
        ({"1": [1, 4], "2": [1, 2], "3": [1, 3]}, "the set of 1 names \\[4\\], outside 1..3"),
        ({"1": [1, 1], "2": [1, 2], "3": [1, 3]}, "names a process twice"),
        ({"x": [1], "2": [1, 2], "3": [1, 3]}, "'x' is not a pid"),
        ({"1": "1,2", "2": [1, 2], "3": [1, 3]}, "must be a list of pids"),
        ({"1": [1, 2], "2": [1, 2], "3": [1, 3], "4": [4, 1]}, "pid 4 is outside 1..3"),
        ("hexagon", 'must be "plane", "grid" or a map'),
        ("plane", "N = 3 is not"),
    ],
)
def test_bad_quorums_are_refused_naming_the_problem(sets, words):
    with pytest.raises(ConfigError, match=words):
        make_setup("maekawa", 3, {"quorums": sets})


def test_explicit_quorums_are_used_as_given():
    setup = make_setup("maekawa", 3, {"quorums": {"1": [1, 2], "2": [2, 3], "3": [3, 1]}})
    assert {p: node.asks for p, node in setup.protocols.items()} == {1: (1, 2), 2: (2, 3), 3: (1, 3)}
    assert setup.params["quorum_sets"] == {"1": [1, 2], "2": [2, 3], "3": [1, 3]}


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=2, max_value=8), st.data())
def test_validate_accepts_exactly_the_pairwise_intersecting_families(n, data):
    sets = {
        i: tuple(sorted({i} | set(data.draw(st.lists(st.integers(1, n), max_size=n), label=f"S{i}"))))
        for i in range(1, n + 1)
    }
    disjoint = [(i, j) for i, j in combinations(sorted(sets), 2) if not set(sets[i]) & set(sets[j])]
    if disjoint:
        i, j = disjoint[0]
        with pytest.raises(ConfigError, match=f"sets of {i} .* and {j} .* do not intersect"):
            qs.validate(sets, n)
    else:
        assert qs.validate(sets, n) == sets
