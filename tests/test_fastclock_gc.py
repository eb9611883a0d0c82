"""The compiled clocks' arrays and tokens out of the cyclic collector's sight (merge.c: compact in
the collector), and their copies made by the array's own ``__copy__`` looked up once per type: a
plain ``array`` and a token of one refer to nothing that could close a cycle, so they are untracked
when made; anything else (an array subclass with a ``__dict__``, which may hold its own
``__copy__`` and any object) is copied and kept exactly as before. Broken builds are caught."""

from __future__ import annotations

import gc
import shutil
from array import array

import pytest
from conftest import missing
from test_fastclock import broken_source

from mutexlab import fastclock


@pytest.fixture(autouse=True)
def a_c_compiler():
    if shutil.which("cc") is None:
        missing("no C compiler (cc): the compiled merge cannot be built, only the plain one runs")


class Counts(array):
    """An array subclass: its instances have a ``__dict__``, so they may refer to anything."""


class Slotted(array):
    """An array subclass without a ``__dict__`` whose slot may refer to anything (its copy is
    one too: ``array.__copy__`` would give a plain array)."""

    __slots__ = ("ref",)

    def __copy__(self) -> Slotted:
        return Slotted(self.typecode, self)


def made(module) -> list[tuple]:
    """Tokens of every kind a clock makes: a tick's copy, a receive's copy (the sender's token
    still held), a receive written in place (the clock alone), and a tick past 255 (widened)."""
    family = module.Family(array("B", bytes(3)))
    a, b = module.Clock(family, 0), module.Clock(family, 1)
    held = [a.tick(), b.tick()]
    held.append(a.merge(held[1]))  # a copy: a's token is held in ``held``
    b_token = b.tick()
    del held[:]  # a's token now only a's: the next news is written in place
    in_place = a.merge(b_token)
    wide = None
    for _ in range(300):
        wide = b.tick()
    assert wide is not None and wide[1].itemsize == 4
    return [b_token, in_place, wide, a.merge(wide)]


def untracked(module) -> bool:
    return all(not gc.is_tracked(t) and not gc.is_tracked(t[1]) for t in made(module))


def subclass_kept(module) -> bool:
    """Clocks over an array subclass: the copies are the instance's own ``__copy__``'s (one put
    on the family's zero is called), and they and their tokens stay tracked; so do a slotted
    subclass's copies and tokens."""
    calls = []
    zero = Counts("B", bytes(2))

    def own_copy():
        calls.append(1)
        return Counts("B", bytes(zero))

    zero.__copy__ = own_copy
    clock = module.Clock(module.Family(zero), 0)
    token = clock.tick()
    again = clock.tick()
    slotted = module.Clock(module.Family(Slotted("B", bytes(2))), 1).tick()
    return (
        type(slotted[1]) is Slotted
        and gc.is_tracked(slotted[1])
        and gc.is_tracked(slotted)
        and calls == [1]
        and type(token[1]) is Counts
        and list(again[1]) == [2, 0]
        and gc.is_tracked(token[1])
        and gc.is_tracked(again)
    )


def test_plain_arrays_and_their_tokens_are_untracked():
    module = fastclock.compiled()
    assert module is not None
    assert untracked(module)
    # and the counts stay right through a full collection
    family = module.Family(array("B", bytes(2)))
    a, b = module.Clock(family, 0), module.Clock(family, 1)
    token = b.tick()
    gc.collect()
    assert list(a.merge(token)[1]) == [0, 1]


def test_a_subclass_is_copied_by_its_own_copy_and_stays_tracked():
    module = fastclock.compiled()
    assert module is not None
    assert subclass_kept(module)


BROKEN = {
    "nothing untracked": ("if (copy != NULL) untrack_counts(copy);", ""),
    "a token untracked whatever its counts": (
        "if (PyObject_GC_IsTracked(token) && !(PyObject_IS_GC(counts) && PyObject_GC_IsTracked(counts)))",
        "if (PyObject_GC_IsTracked(token))",
    ),
    "any array type untracked": (
        "return type->tp_base == &PyBaseObject_Type && type->tp_dictoffset == 0 &&",
        "return 1 ||",
    ),
    "an instance's own __copy__ ignored": ("if (Py_TYPE(counts)->tp_dictoffset != 0)", "if (0)"),
}


@pytest.mark.parametrize("name", BROKEN)
def test_a_broken_build_is_caught(name, tmp_path, monkeypatch):
    monkeypatch.setenv("MUTEXLAB_CACHE", str(tmp_path / "cache"))
    module = fastclock.load(broken_source(tmp_path, *BROKEN[name]))
    assert module is not None
    assert not (untracked(module) and subclass_kept(module)), f"the broken build passed ({name})"
