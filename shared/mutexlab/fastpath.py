"""Every speed shortcut of the core, in one place; the simulator's own is ``sim/fastpath.py``.

Each shortcut builds the very object, or takes the very step, that the plain code does, only
cheaper; each states the invariant it relies on and what it saves, in instructions per run
(``python -m bench.instructions``, valgrind, every case: docs/scaling.md#fast-paths).
``tests/test_fastpath.py`` holds each to its plain twin and shows a broken variant caught.

* ``slot_init``: the ``__init__`` of a frozen slotted dataclass (``protocol.Send``);
* ``trusted(Model)``: a message model's constructor without validation, for values the
  protocol itself knows valid;
* ``bind_table_dispatch``: ``Protocol.on_message`` with a class's compiled table bound in (what
  a handler raises made a finding the same way);
* ``same_but``, ``changed_entries``: vector clocks compared as item sets, in C, where the wire packs
  a step frame or a trace batch (``bus/wire.py``);
* ``plain_reads(Model)``: a message model's attribute reads without pydantic's ``__getattr__``
  hook (which only answers for private attributes and extra fields, and keeps the interpreter
  from specialising every ``msg.ts``).
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


# -- slot_init ------------------------------------------------------------------------------
def slot_init(cls: type[T]) -> type[T]:
    """Give a frozen ``slots=True`` dataclass without defaults an ``__init__`` that fills each
    slot through the slot's own setter, instead of the generated ``object.__setattr__`` per field.

    Invariant: the same object (slots, equality, hash, repr and signature are the dataclass's);
    a class with defaults, factories or ``__post_init__`` is refused, not half-served.
    Gain: one ``Send`` per simulated message; with the generated ``__init__`` a run takes 1.04–1.05×
    the instructions (bees P = 100, Ricart–Agrawala N = 50, Sanders N = 49, elves 20)."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    if not params.frozen or "__slots__" not in cls.__dict__ or hasattr(cls, "__post_init__"):
        raise TypeError(
            f"slot_init is for frozen slotted dataclasses without __post_init__, not {cls.__name__}"
        )
    if any(
        f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING for f in fields
    ):
        raise TypeError(f"slot_init: {cls.__name__} has a default")
    names = [f.name for f in fields]
    scope = {f"_set_{name}": cls.__dict__[name].__set__ for name in names}
    body = "".join(f"    _set_{name}(self, {name})\n" for name in names) or "    pass\n"
    exec(f"def __init__(self, {', '.join(names)}):\n{body}", scope)  # noqa: S102 - as dataclasses does
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = dict(cls.__init__.__annotations__)
    init.__wrapped__ = cls.__init__  # the generated one, which tests compare against
    cls.__init__ = init  # type: ignore[method-assign]
    return cls


# -- trusted --------------------------------------------------------------------------------
def _slot_setters() -> tuple[Callable[[Any, Any], None], ...] | None:
    """Setters of the four instance slots pydantic's ``BaseModel`` fills on validation, checked
    against validation in this pydantic (not assumed); None when they do not reproduce it."""
    slots = BaseModel.__dict__
    try:
        setters = tuple(
            slots[name].__set__
            for name in ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
        )
    except (KeyError, AttributeError):
        return None
    set_dict, set_fields, set_extra, set_private = setters

    class Probe(BaseModel):
        model_config = ConfigDict(frozen=True, extra="forbid")
        sender: int = Field(ge=0)
        ts: int = Field(ge=0)
        type: str = "probe"
        more: int = 0

    made = object.__new__(Probe)
    set_dict(made, {"sender": 1, "ts": 2, "type": "probe", "more": 3})
    set_fields(made, {"sender", "ts", "more"})
    set_extra(made, None)
    set_private(made, None)
    valid = Probe(sender=1, ts=2, more=3)
    same = (
        list(made.__dict__.items()) == list(valid.__dict__.items())
        and made == valid
        and made.model_fields_set == valid.model_fields_set
        and repr(made) == repr(valid)
        and made.__pydantic_extra__ == valid.__pydantic_extra__
        and made.__pydantic_private__ == valid.__pydantic_private__
        and made.model_dump_json() == valid.model_dump_json()
        and hash(made) == hash(valid)
    )
    return setters if same else None


_SETTERS = _slot_setters()


def trusted(model: type[M]) -> Callable[..., M]:
    """The unvalidated constructor of message model ``model``: ``trusted(Model)(sender, ts,
    *fields)``, every field but ``type`` positionally in declaration order. Make it once (at
    import) and call it: ``_ack = trusted(ACKflower)`` … ``_ack(self.pid, self.clock.tick(), ts)``.

    Invariant: the values are ones the protocol itself knows valid (its pid, its clock, fields of
    a message already validated); the result is the very object ``Model(**fields)`` gives (same
    ``__dict__`` in the same order, an equal fields set: one per frozen model, shared), so
    equality, dumps and traces cannot tell.
    ``_slot_setters`` checks that against this pydantic at import; if it differs, or the model has
    no ``type`` tag, the constructor validates. Bytes and dicts from outside never come here:
    ``Codec.decode`` always validates.
    Gain: the bees build their ACKs (most of their traffic) with it; validating them instead, a
    run takes 1.17× the instructions (bees P = 50 and 100)."""
    return _trusted_builder(model)


def _trusted_builder(cls: type[BaseModel]) -> Callable[..., Any]:
    names = tuple(cls.model_fields)
    field = cls.model_fields.get("type")
    tag = None if field is None else field.default
    given = tuple(name for name in names if name != "type")  # the arguments, in order
    if not isinstance(tag, str) or names[:2] != ("sender", "ts") or _SETTERS is None:

        def validated(*values: Any) -> Any:  # no type tag (a base model) or no fast path
            if len(values) != len(given):
                raise TypeError(f"{cls.__name__}.trusted takes {', '.join(given)}; got {len(values)} values")
            return cls(**dict(zip(given, values)))

        return validated
    new = object.__new__
    set_dict, set_fields, set_extra, set_private = _SETTERS
    if names == ("sender", "ts", "type", given[-1]) and len(given) == 3:
        last = given[-1]
        # A frozen model's fields set is never written (pydantic's setattr refuses first; its copies
        # copy the set): every message of the class shares one, equal to the one validation makes.
        # Speed: one allocation, one object for the collector and 216 bytes less per message in
        # flight (bees at P = 1000: ~600,000 of them).
        shared = {"sender", "ts", last} if cls.model_config.get("frozen") else None

        def trusted(sender: int, ts: int, value: Any) -> Any:  # the common shape: one own field
            msg: Any = new(cls)
            set_dict(msg, {"sender": sender, "ts": ts, "type": tag, last: value})
            set_fields(msg, shared if shared is not None else {"sender", "ts", last})
            set_extra(msg, None)
            set_private(msg, None)
            return msg

        return trusted

    def trusted_any(*values: Any) -> Any:
        if len(values) != len(given):
            raise TypeError(f"{cls.__name__}.trusted takes {', '.join(given)}; got {len(values)} values")
        data = dict(zip(given, values))
        msg: Any = new(cls)
        set_dict(msg, {name: data[name] if name != "type" else tag for name in names})
        set_fields(msg, set(given))
        set_extra(msg, None)
        set_private(msg, None)
        return msg

    return trusted_any


# -- bind_table_dispatch --------------------------------------------------------------------
def bind_table_dispatch(cls: Any, plain: Callable[[Any, Any], Any]) -> None:
    """Give ``cls`` (a protocol class whose table was just compiled into ``cls._transitions``) an
    ``on_message`` with that table bound in, when its ``on_message`` is ``plain``
    (``Protocol.on_message``) or one bound for a base class; a handwritten one is kept.

    Invariant: ``cls._transitions`` is set at class creation (or, for a TABLE set after it, when its
    setup is built: ``Protocol.compile_table``), before this call, so the
    bound lookup finds what ``plain`` (``self._transitions.get``) would. Subclasses recompile
    their table, so a subclass's handler override runs.
    Gain: one attribute lookup and one key tuple less per message: with the plain ``on_message``
    a run takes 1.008× the instructions (Ricart–Agrawala N = 50); the tuple alone cost Maekawa 1 %."""
    if cls.on_message is plain or getattr(cls.on_message, "table_dispatch", False):
        cls.on_message = _table_dispatch(cls._transitions)


def _table_dispatch(
    transitions: dict[tuple[str, str], Callable[[Any, Any], Any]],
) -> Callable[[Any, Any], Any]:
    rows: dict[str, dict[str, Callable[[Any, Any], Any]]] = {}  # state → type → handler
    for (state, inp), fn in transitions.items():
        rows.setdefault(state, {})[inp] = fn

    from .protocol import ProtocolError, handler_raised, no_name, wrong_return  # noqa: PLC0415 - protocol.py imports this module
    from .show import unnamed  # noqa: PLC0415 - beside the one above

    def on_message(self: Any, msg: Any) -> Any:
        state = self.state
        try:
            fn = rows[state][msg.type]
        except KeyError:
            raise self.refuse(msg) from None
        try:
            effects = fn(self, msg)
        except ProtocolError:
            raise
        except (Exception, SystemExit, GeneratorExit) as exc:  # a finding, as Protocol.on_message makes it
            raise handler_raised(self, state, msg, exc) from exc
        if type(effects) is not list and type(effects) is not tuple:  # None, a bare Send: a finding
            raise wrong_return(self, state, msg, fn, effects)
        if self.state is not state and unnamed(self.state):  # a plain Enum member: exit 2
            raise no_name(self, state, msg, fn)
        return effects

    on_message.table_dispatch = True  # type: ignore[attr-defined]  # replaceable by a subclass's own
    return on_message


# -- clock comparisons ----------------------------------------------------------------------
def same_but(vc: dict[str, Any], other: dict[str, Any], own: str) -> bool:
    """``vc`` and ``other`` have the same entries, except perhaps ``own``'s (in a step frame, an
    entry whose clock is the one before with only the sender's entry changed is sent as a tick).

    Invariant: the answer of the entry-by-entry comparison both ways; entries compared as item
    sets (hash and equality: a clock's entries are integers), entry by entry if one is unhashable.
    Gain: a bees P = 50 broadcast compares 49 clocks of 50 entries; entry by entry, this and
    ``changed_entries`` were 13% of the bees' profiled CPU (docs/wire.md)."""
    if len(vc) != len(other):
        return False
    try:
        differing = vc.items() ^ other.items()
    except TypeError:  # an unhashable entry: not a clock a process made
        return all(
            k == own or (k in b and b[k] == v) for a, b in ((vc, other), (other, vc)) for k, v in a.items()
        )
    return all(k == own for k, _ in differing)


def changed_entries(vc: dict[str, Any], prev: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``vc`` that differ from ``prev``'s (``prev.get(k) != v``), in ``vc``'s order:
    what a trace batch sends of an event's clock after the event before.

    Invariant: that comprehension's dict, order included. One changed entry (a broadcast's sends,
    one after another) is found as a difference of item sets, in C; more (or an unhashable or
    ``None`` entry) are picked in order by the comprehension itself."""
    try:
        changed = vc.items() - prev.items()
    except TypeError:  # an unhashable entry: not a clock a process made
        changed = None
    if changed is not None and len(changed) <= 1 and all(v is not None for _, v in changed):
        return dict(changed)
    return {k: v for k, v in vc.items() if prev.get(k) != v}


# -- plain_reads ----------------------------------------------------------------------------
_TP_GETATTRO = 18 * ctypes.sizeof(ctypes.c_void_p)  # PyTypeObject.tp_getattro's offset (CPython 3.8+)


def _generic_getattr() -> int | None:
    """The address of ``PyObject_GenericGetAttr`` when ``tp_getattro`` is where ``_TP_GETATTRO``
    says (checked on ``object``, ``int`` and a class whose ``__getattr__`` hooks it), else None."""
    if sys.implementation.name != "cpython" or os.environ.get("MUTEXLAB_PYDANTIC_READS") == "1":
        return None
    try:
        generic = ctypes.cast(ctypes.pythonapi.PyObject_GenericGetAttr, ctypes.c_void_p).value
    except (AttributeError, ValueError):
        return None

    class Hooked:
        def __getattr__(self, name: str) -> Any:
            raise AttributeError(name)

    def slot(cls: type) -> int | None:
        return ctypes.c_void_p.from_address(id(cls) + _TP_GETATTRO).value

    if generic is None or slot(object) != generic or slot(int) != generic or slot(Hooked) in (None, generic):
        return None
    return generic


_GENERIC_GETATTR = _generic_getattr()


def plain_reads(model: type[BaseModel]) -> bool:
    """Make ``model``'s attribute reads Python's own (``object.__getattribute__``), without the
    ``__getattr__`` hook ``BaseModel`` adds; True if done. Called for every message model
    (``Message.__pydantic_init_subclass__``); a subclass gets pydantic's hook back from Python and
    is given this again by the same call.

    Invariant: pydantic's ``__getattr__`` runs only where the plain read found nothing, and then
    answers only for private attributes and extra fields; a model with neither (``extra`` not
    "allow", no ``PrivateAttr``) and with no ``__getattr__`` or ``__getattribute__`` of its own
    reads the same values and raises the same ``AttributeError`` text without it ("'ACKflower'
    object has no attribute 'x'"). Any other model, another interpreter, a ``tp_getattro`` not
    where CPython keeps it, or ``MUTEXLAB_PYDANTIC_READS=1``: nothing changes (False).
    ``tests/test_plain_reads.py`` holds every algorithm's models to their hooked twins and shows
    broken variants caught; ``bench.tracecheck`` runs give the same traces either way.
    Gain: with the hook, CPython cannot specialise ``LOAD_ATTR`` on a model (every ``msg.ts`` is
    its generic lookup, ~5× a slot's read): a run takes 1.06× the instructions (bees P = 100,
    Ricart–Agrawala N = 50), 1.02× (Lamport N = 30); CPU: docs/benchmarks.md#plain-reads."""
    generic = _GENERIC_GETATTR
    if generic is None or not _plain_reads_allowed(model):
        return False
    ctypes.c_void_p.from_address(id(model) + _TP_GETATTRO).value = generic
    return True


def _plain_reads_allowed(model: type[BaseModel]) -> bool:
    return (
        isinstance(model, type)
        and issubclass(model, BaseModel)
        and not model.__private_attributes__
        and model.model_config.get("extra") != "allow"
        and getattr(model, "__getattr__", None) is getattr(BaseModel, "__getattr__", None)
        and model.__getattribute__ is object.__getattribute__
    )


def reads_plain(model: type) -> bool:
    """Whether ``model``'s attribute reads are Python's own (``plain_reads`` done, or no hook)."""
    generic = _GENERIC_GETATTR
    return generic is not None and ctypes.c_void_p.from_address(id(model) + _TP_GETATTRO).value == generic
