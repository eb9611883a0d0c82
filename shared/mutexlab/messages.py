"""Message models: one pydantic model per message type, a discriminated union on ``type``.

Every protocol message carries ``type``, ``sender`` (pid, int) and ``ts`` (the sender's
Lamport clock at sending). Each algorithm defines its models in its own module and builds a
``Codec`` from them; names of types are unique within one algorithm, not across algorithms
(Lamport and Maekawa both have ``REQUEST``).

``Codec.decode`` is the only way bytes from the network become messages: anything malformed
or unknown raises ``MessageError`` naming the problem.
"""

from __future__ import annotations

import json
import types as _types
from collections.abc import Mapping
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic_core import PydanticUndefined

from .fastpath import plain_reads

_ATOMS = (int, str, float, bool, bytes, type(None))


def _unchanging(value: Any) -> bool:
    if type(value) in _ATOMS or isinstance(value, Enum):
        return True
    if type(value) in (tuple, frozenset):
        return all(_unchanging(v) for v in value)
    return isinstance(value, Message) and value.is_value()


class Message(BaseModel):
    """Base of every protocol message."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sender: int = Field(ge=0)
    ts: int = Field(ge=0)
    if TYPE_CHECKING:  # every model declares its tag, ``type: Literal[...]`` (not a field here)

        @property
        def type(self) -> str: ...

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        """Each message model reads its fields without pydantic's ``__getattr__`` hook
        (``fastpath.plain_reads``: the same values, the interpreter's fast reads)."""
        super().__pydantic_init_subclass__(**kwargs)
        plain_reads(cls)

    def trace_type(self) -> str:
        """The type a trace's ``send`` and ``recv`` of this message name: its ``type``."""
        return self.type

    def trace_body(self) -> dict[str, Any]:
        """The ``msg`` a trace's ``send`` of this message carries: the whole message."""
        return self.model_dump(mode="json")

    def is_value(self) -> bool:
        """Whether nothing this message holds can change: its fields are numbers, strings,
        enums, or tuples, frozensets and messages of them. ``frozen`` freezes the fields, not
        what they hold: a list field can be appended to after the message was made (or sent)."""
        return all(_unchanging(v) for v in self.__dict__.values())

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Message:
        # A value is shared by the copies of a protocol's state; a message holding a list, a dict
        # or a set is copied, so a handler changing what a message it keeps holds changes its own
        # world only (shared, it changed every world forked from it, and check's worlds lied).
        if self.is_value():
            return self
        return super().__deepcopy__(memo)


plain_reads(Message)


def may_change(model: type[Message], seen: frozenset[type] = frozenset()) -> bool:
    """Whether a message of ``model`` may hold what can change after it is made (a list, a dict, a
    set, anything its fields do not say), as told by its fields' annotations: numbers, strings,
    enums, literals, and tuples, frozensets, unions and messages of them cannot."""
    return any(_annotation_may_change(f.annotation, seen | {model}) for f in model.model_fields.values())


def _annotation_may_change(annotation: Any, seen: frozenset[type]) -> bool:
    if annotation in _ATOMS or annotation is None:
        return False
    origin = get_origin(annotation)
    if origin is Literal:
        return False
    if origin in (tuple, frozenset, Union, _types.UnionType, Annotated):
        args = get_args(annotation)[:1] if origin is Annotated else get_args(annotation)
        return any(_annotation_may_change(a, seen) for a in args if a is not Ellipsis)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return False
    if isinstance(annotation, type) and issubclass(annotation, Message):
        return annotation not in seen and may_change(annotation, seen)
    return True  # a list, a dict, a set, Any, a class of its own: it may


def tags(model: type[Message]) -> tuple[str, ...]:
    """The message types of ``model``: the values of its ``type: Literal[...]`` (one, as a rule,
    its default too; several make one model of several types, each message naming its own).
    Raises TypeError naming the model and what its ``type`` field lacks."""
    if not (isinstance(model, type) and issubclass(model, Message)):
        raise TypeError(f"a codec takes message models (subclasses of Message), not {model!r:.80}")
    name, field = model.__name__, model.model_fields.get("type")
    if field is None:
        other = [
            f"`{f}: {_shown(i.annotation)}`"
            for f, i in model.model_fields.items()
            if get_origin(i.annotation) is Literal
        ]
        also = f" ({', '.join(other)} is a field of its own, not the message type)" if other else ""
        raise TypeError(
            f'message model {name} has no field `type`: declare it, `type: Literal["{name.upper()}"] = "{name.upper()}"`{also}'
        )
    values = get_args(field.annotation) if get_origin(field.annotation) is Literal else ()
    kinds = tuple(v.value if isinstance(v, Enum) else v for v in values)
    if not kinds or not all(isinstance(k, str) and k for k in kinds):
        raise TypeError(
            f"message model {name}: its field `type` is typed {_shown(field.annotation)}; a message type is "
            f'a string named by a Literal, `type: Literal["{name.upper()}"] = "{name.upper()}"`'
        )
    if field.default not in (PydanticUndefined, *kinds, *values):
        raise TypeError(
            f"message model {name}: its field `type` defaults to {field.default!r}, none of {_shown(field.annotation)}"
        )
    return kinds


def lacking(codec: Codec, needed: Mapping[str, Mapping[str, type]], problem: str) -> str | None:
    """Why ``codec``'s messages lack what the problem ``problem`` reads of them, or None.
    ``needed``: message type → field → its type (``"*"``: any type with that field), e.g. the
    elves' ``{"STOP": {"round": int}}``. A type the codec has not is no lack (sent, it would be
    unknown); one whose model lacks a field, or types it otherwise, is, naming both."""
    for kind, fields in needed.items():
        found = [(kind, codec.models[kind])] if kind in codec.models else []
        for tag, model in codec.models.items() if kind == "*" else found:
            for name, typ in fields.items():
                field = model.model_fields.get(name)
                where = f"its message type {tag} ({model.__name__})"
                if field is None and kind != "*":
                    return (
                        f"{where} has no field `{name}`: the problem {problem} reads the {name} of every "
                        f"{tag}; declare it, `{name}: {typ.__name__}`"
                    )
                if field is not None and not _typed(field.annotation, typ):
                    return (
                        f"{where} has the field `{name}` typed {_shown(field.annotation)}: the problem "
                        f"{problem} reads it as {typ.__name__}; declare it `{name}: {typ.__name__}`"
                    )
    return None


def body_lacks(body: Any, needed: Mapping[str, Mapping[str, type]], problem: str) -> str | None:
    """``lacking`` for a message a program sent, its JSON ``body``: why it lacks a field the
    problem ``problem`` reads, or has it of another type (an int: a whole number, no boolean), or
    None."""
    kind = body.get("type") if isinstance(body, dict) else None
    for wanted, fields in needed.items():
        if wanted not in (kind, "*"):
            continue
        for name, typ in fields.items():
            if name not in body:
                if wanted != "*":
                    return (
                        f"a {kind} without `{name}`: the problem {problem} reads the {name} of every {kind}"
                    )
            elif type(body[name]) is not typ:
                return (
                    f"a {kind} whose `{name}` is {json.dumps(body[name])[:40]}, not {_json_name(typ)}: "
                    f"the problem {problem} reads it as one"
                )
    return None


def _json_name(typ: type) -> str:
    return {int: "a whole number", str: "a string", bool: "true or false", float: "a number"}.get(
        typ, typ.__name__
    )


def _typed(annotation: Any, typ: type) -> bool:
    """Whether every value ``annotation`` admits is a ``typ`` (an int is no bool, nor a bool an int)."""
    if get_origin(annotation) is Literal:
        return all(
            type(v) is typ or (isinstance(v, typ) and not isinstance(v, bool)) for v in get_args(annotation)
        )
    return isinstance(annotation, type) and issubclass(annotation, typ) and not issubclass(annotation, bool)


def _shown(annotation: Any) -> str:
    if get_origin(annotation) is Literal:
        return (
            f"Literal[{', '.join(repr(a.value if isinstance(a, Enum) else a) for a in get_args(annotation))}]"
        )
    return getattr(annotation, "__name__", None) or repr(annotation)


def _got(error: Any) -> str:
    """What a field was given, where pydantic's message does not say (``Input should be 'req' or
    'rel'``): a number or a short string, never a whole message or a long text."""
    value = error.get("input")
    if error.get("type") == "missing" or type(value) not in (int, float, str, bool):
        return ""
    return f" (got {value!r})" if len(repr(value)) <= 40 else ""


class MessageError(ValueError):
    """Bytes or a dict that are not a valid message of the algorithm."""


class Codec:
    """Encode/decode the messages of one algorithm (a discriminated union on ``type``)."""

    def __init__(self, *models: type[Message]) -> None:
        if not models:
            raise ValueError("a codec needs at least one message model")
        self.models: dict[str, type[Message]] = {}
        for model in models:
            for kind in tags(model):
                if kind in self.models:
                    raise TypeError(
                        f"message models {self.models[kind].__name__} and {model.__name__} both have the "
                        f"type {kind!r}: each message type is one model's (a codec decodes by it)"
                    )
                self.models[kind] = model
        union = models[0] if len(models) == 1 else Union[models]  # noqa: UP007 - a runtime union of a tuple
        self._adapter: TypeAdapter[Message] = TypeAdapter(Annotated[union, Field(discriminator="type")])  # type: ignore[arg-type]  # a union built at runtime

    @property
    def types(self) -> list[str]:
        return list(self.models)

    @property
    def changeable(self) -> frozenset[str]:
        """The types whose messages may hold a list, a dict or a set (``may_change``): a driver that
        hands over the object sent gives each receiver a copy of one of these, as a receiver over
        the wire gets its own, unchanged by what its sender or another receiver does to theirs."""
        return frozenset(kind for kind, model in self.models.items() if may_change(model))

    def decode(self, data: bytes | str | dict[str, Any]) -> Message:
        try:
            if isinstance(data, (bytes, str)):
                data = json.loads(data)
        except (ValueError, RecursionError) as exc:  # not JSON or UTF-8, too deep, a 5000-digit number
            raise MessageError(f"not JSON: {str(exc)[:200]}") from None
        if not isinstance(data, dict):
            raise MessageError(f"a message must be a JSON object, got {type(data).__name__}")
        kind = data.get("type")
        if kind not in self.models:
            raise MessageError(f"unknown message type {kind!r} (expected one of {', '.join(self.models)})")
        try:
            return self._adapter.validate_python(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'][1:]) or 'message'}: {e['msg']}{_got(e)}"
                for e in exc.errors()
            )
            raise MessageError(f"invalid {kind}: {problems}") from None

    def received(self, msg: Message, text: str) -> Message:
        """``msg`` as a receiver over the wire gets it, decoded from its JSON ``text`` (a dict's
        int keys come back strings unless its field says ``dict[int, …]``). Raises ``MessageError``
        naming why when ``text`` is no valid message (a float NaN or infinity, which JSON writes
        as null, a value its own model refuses on the way in): a receiver over the wire would
        refuse it, so a driver makes it a finding against the sender (``protocol.Undecodable``),
        never hands the receiver ``msg`` itself."""
        return self.decode(text)

    @staticmethod
    def encode(msg: Message) -> bytes:
        return msg.model_dump_json().encode()

    @staticmethod
    def to_dict(msg: Message) -> dict[str, Any]:
        return msg.model_dump(mode="json")
