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
from typing import Annotated, Any, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError


class Message(BaseModel):
    """Base of every protocol message."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sender: int = Field(ge=0)
    ts: int = Field(ge=0)

    def __deepcopy__(self, memo: dict | None = None) -> Message:
        # Messages are immutable values: copies of a protocol's state may share them.
        return self

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        # each model its own (never inherited), built when the class is made
        cls.trusted = staticmethod(_trusted_builder(cls))  # type: ignore[method-assign]

    @staticmethod
    def trusted(*values: Any) -> Message:
        """``Model.trusted(sender, ts, *fields)``: every field but ``type``, positionally in
        declaration order, from values the protocol itself knows valid (its pid, its clock, fields
        of a message already validated). Built without validation (about half the cost) into the
        very object ``Model(**fields)`` gives: same ``__dict__`` in the same order, same fields set,
        so equality, dumps and traces are unchanged. Bytes and dicts from outside go through
        ``Codec.decode``, which always validates. (Each subclass gets its own builder.)

        Speed, the one place messages skip validation: the bees build their ACKs (most of their
        traffic) with it; measured with bench/, without it bees P = 100 take ×1.1 the time.
        ``_slot_setters`` checks at import that this pydantic builds the same object, else every
        ``trusted`` validates."""
        raise TypeError("trusted() builds concrete message models, not Message itself")


class MessageError(ValueError):
    """Bytes or a dict that are not a valid message of the algorithm."""


class Codec:
    """Encode/decode the messages of one algorithm (a discriminated union on ``type``)."""

    def __init__(self, *models: type[Message]) -> None:
        if not models:
            raise ValueError("a codec needs at least one message model")
        self.models = {m.model_fields["type"].default: m for m in models}
        union = models[0] if len(models) == 1 else Union[models]  # type: ignore[valid-type]  # noqa: UP007 - a runtime union of a tuple
        self._adapter: TypeAdapter[Message] = TypeAdapter(Annotated[union, Field(discriminator="type")])  # type: ignore[arg-type]  # a union built at runtime

    @property
    def types(self) -> list[str]:
        return list(self.models)

    def decode(self, data: bytes | str | dict) -> Message:
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

    @staticmethod
    def encode(msg: Message) -> bytes:
        return msg.model_dump_json().encode()

    @staticmethod
    def to_dict(msg: Message) -> dict[str, Any]:
        return msg.model_dump(mode="json")


def _slot_setters():
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


def _trusted_builder(cls: type[Message]):
    """The ``trusted`` constructor of one model (see ``Message.trusted``)."""
    names = tuple(cls.model_fields)
    field = cls.model_fields.get("type")
    tag = None if field is None else field.default
    given = tuple(name for name in names if name != "type")  # the arguments, in order
    if not isinstance(tag, str) or names[:2] != ("sender", "ts") or _SETTERS is None:

        def validated(*values: Any) -> Message:  # no type tag (a base model) or no fast path
            if len(values) != len(given):
                raise TypeError(f"{cls.__name__}.trusted takes {', '.join(given)}; got {len(values)} values")
            return cls(**dict(zip(given, values)))

        return validated
    new = object.__new__
    set_dict, set_fields, set_extra, set_private = _SETTERS
    if names == ("sender", "ts", "type", given[-1]) and len(given) == 3:
        last = given[-1]

        def trusted(sender: int, ts: int, value: Any) -> Message:  # the common shape: one own field
            msg = new(cls)
            set_dict(msg, {"sender": sender, "ts": ts, "type": tag, last: value})
            set_fields(msg, {"sender", "ts", last})
            set_extra(msg, None)
            set_private(msg, None)
            return msg

        return trusted

    def trusted_any(*values: Any) -> Message:
        if len(values) != len(given):
            raise TypeError(f"{cls.__name__}.trusted takes {', '.join(given)}; got {len(values)} values")
        data = dict(zip(given, values))
        msg = new(cls)
        set_dict(msg, {name: data[name] if name != "type" else tag for name in names})
        set_fields(msg, set(given))
        set_extra(msg, None)
        set_private(msg, None)
        return msg

    return trusted_any
