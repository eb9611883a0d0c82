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
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

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


class MessageError(ValueError):
    """Bytes or a dict that are not a valid message of the algorithm."""


class Codec:
    """Encode/decode the messages of one algorithm (a discriminated union on ``type``)."""

    def __init__(self, *models: type[Message]) -> None:
        if not models:
            raise ValueError("a codec needs at least one message model")
        self.models = {m.model_fields["type"].default: m for m in models}
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
                f"{'.'.join(str(p) for p in e['loc'][1:]) or 'message'}: {e['msg']}" for e in exc.errors()
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
