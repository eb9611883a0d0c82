"""``fastpath.plain_reads``: every algorithm's message models read their attributes without
pydantic's ``__getattr__`` hook, and read exactly what the hooked model reads (values, and the
same ``AttributeError`` text for a missing name); models the shortcut cannot serve (private
attributes, extra fields, a ``__getattr__`` of their own) keep the hook; broken variants (the
shortcut forced onto such a model) are caught by the same comparison."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, PrivateAttr

from mutexlab import fastpath
from mutexlab.messages import Message
from mutexlab.protocols.registry import SPECS

# Skipped only where the shortcut is meant to be off (another interpreter, or the switch set): on
# CPython a ``tp_getattro`` its check cannot find (a layout it does not know) fails these tests.
CPYTHON = sys.implementation.name == "cpython" and os.environ.get("MUTEXLAB_PYDANTIC_READS") != "1"
needs_cpython = pytest.mark.skipif(
    not CPYTHON, reason="plain_reads serves CPython only, and MUTEXLAB_PYDANTIC_READS=1 turns it off"
)
NAMES = ("type", "sender", "ts", "missing", "model_fields_set", "__pydantic_extra__", "trace_type", "_secret")


def hooked_read(obj: Any, name: str) -> Any:
    """A read as CPython's ``__getattr__`` hook makes it: the plain lookup, then the hook."""
    try:
        return object.__getattribute__(obj, name)
    except AttributeError:
        return type(obj).__getattr__(obj, name)


def outcome(read: Any, obj: Any, name: str) -> tuple[str, Any]:
    try:
        return "value", read(obj, name)
    except AttributeError as exc:
        return "AttributeError", str(exc)


def differing_reads(obj: Any, names: tuple[str, ...]) -> list[str]:
    """The names whose plain read (``getattr``) differs from the hooked one."""
    return [name for name in names if outcome(getattr, obj, name) != outcome(hooked_read, obj, name)]


def models() -> list[type[Message]]:
    return [model for spec in SPECS.values() for model in spec.codec.models.values()]


def sample(model: type[Message]) -> Message:
    return model.model_construct(**{name: f"v-{name}" for name in model.model_fields if name != "type"})


@needs_cpython
@pytest.mark.parametrize("model", models(), ids=lambda m: f"{m.__module__.rsplit('.', 2)[-2]}.{m.__name__}")
def test_every_message_model_reads_plain_and_the_same(model: type[Message]) -> None:
    assert fastpath.reads_plain(model)
    assert not fastpath.reads_plain(BaseModel)  # pydantic's own classes keep their hook
    msg = sample(model)
    assert differing_reads(msg, (*model.model_fields, *NAMES)) == []
    with pytest.raises(AttributeError, match=f"^'{model.__name__}' object has no attribute 'nothing'$"):
        _ = msg.nothing  # type: ignore[attr-defined]
    assert getattr(msg, "nothing", 7) == 7


@needs_cpython
def test_a_subclass_gets_the_hook_from_python_and_plain_reads_again() -> None:
    class Base(Message):
        type: Literal["B"] = "B"

    class Sub(Base):
        extra_field: int = 0

    assert fastpath.reads_plain(Base) and fastpath.reads_plain(Sub)
    assert differing_reads(Sub(sender=1, ts=2), ("extra_field", *NAMES)) == []


@needs_cpython
def test_models_it_cannot_serve_keep_the_hook() -> None:
    class Private(Message):
        type: Literal["P"] = "P"
        _secret: str = PrivateAttr(default="s")

    class Extra(Message):
        model_config = ConfigDict(frozen=True, extra="allow")
        type: Literal["E"] = "E"

    class Own(Message):
        type: Literal["O"] = "O"

        def __getattr__(self, name: str) -> Any:
            return f"own {name}"

    for model in (Private, Extra, Own):
        assert not fastpath.reads_plain(model), model
        assert fastpath.plain_reads(model) is False
    assert Private(sender=1, ts=1)._secret == "s"  # noqa: SLF001 - the private attribute, still read
    assert Extra(sender=1, ts=1, more=3).more == 3  # type: ignore[attr-defined]
    assert Own(sender=1, ts=1).anything == "own anything"


@needs_cpython
@pytest.mark.parametrize("kind", ["private", "extra"])
def test_the_shortcut_forced_onto_a_hooked_model_is_caught(kind: str) -> None:
    """Broken variants: ``plain_reads`` without its guard. The comparison above catches them."""

    class Private(Message):
        type: Literal["P"] = "P"
        _secret: str = PrivateAttr(default="s")

    class Extra(Message):
        model_config = ConfigDict(frozen=True, extra="allow")
        type: Literal["E"] = "E"

    model: type[Message]
    if kind == "private":
        model, msg, name = Private, Private(sender=1, ts=1), "_secret"
    else:
        model, msg, name = Extra, Extra(sender=1, ts=1, more=3), "more"
    assert differing_reads(msg, (name,)) == []
    force(model)
    assert fastpath.reads_plain(model)
    assert differing_reads(msg, (name,)) == [name]


def force(model: type) -> None:
    generic = fastpath._GENERIC_GETATTR  # noqa: SLF001 - the broken variant pokes as the shortcut does
    ctypes.c_void_p.from_address(id(model) + fastpath._TP_GETATTRO).value = generic  # noqa: SLF001


def test_the_switch_keeps_pydantic_reads() -> None:
    code = (
        "from mutexlab import fastpath; from mutexlab.protocols.bees.messages import ACKflower; "
        "print(fastpath.reads_plain(ACKflower), fastpath.plain_reads(ACKflower))"
    )
    shared = str(Path(fastpath.__file__).resolve().parents[1])
    for switch, expected in (("1", "False False"), ("0", "True True" if CPYTHON else "False False")):
        env = dict(os.environ, MUTEXLAB_PYDANTIC_READS=switch, PYTHONPATH=shared)
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        assert out.stdout.split() == expected.split(), switch
