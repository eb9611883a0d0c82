"""The hamster killers' states, messages and names: what the mayor, the elf, the setup share."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, ClassVar, Literal

from pydantic import Field

from ...messages import Codec, Message

MAYOR = 0
CONTRACT, PINS, POISON = "contract", "pins", "poison"
KINDS = (CONTRACT, PINS, POISON)


class MayorState(StrEnum):
    """The problem statement's states of the mayor (INITIAL is also an elf's)."""

    INITIAL = "INITIAL"
    MAYOR_WAITING = "MAYOR_WAITING"
    MAYOR_DONE = "MAYOR_DONE"


class ElfState(StrEnum):
    """The problem statement's states of an elf (INITIAL is also the mayor's)."""

    INITIAL = "INITIAL"
    ELF_REQUESTING = "ELF_REQUESTING"
    ELF_CRITICAL = "ELF_CRITICAL"
    ELF_WAIT_FOR_RELEASE = "ELF_WAIT_FOR_RELEASE"
    ELF_FINISHED = "ELF_FINISHED"
    ELF_DONE = "ELF_DONE"


class RoundMessage(Message):
    round: int = Field(ge=1)


# X_REQUEST, X_REPLY and X_RELEASE: what an elf sends the other elves about resource ``kind``
# (the elf's table maps each type to its handler). Plain classes mixed into the models below, so
# ``isinstance`` against them is a quick C check (check/ and the tests' variants use it).
if TYPE_CHECKING:

    class _Fields:  # what the models they are mixed into have (for the type checker only)
        type: str
        sender: int
        ts: int
        round: int
        kind: ClassVar[str]

    class _Units(_Fields):
        units: int
else:
    _Fields = _Units = object


class XRequest(_Units):
    __slots__ = ()


class XReply(_Fields):
    __slots__ = ()


class XRelease(_Units):
    __slots__ = ()


XMessage = XRequest | XReply | XRelease  # what passes an elf's round gate


class InitContracts(RoundMessage):
    """Mayor → every elf: the round's contracts, as numbers of hamsters (contract i = item i−1)."""

    type: Literal["INIT_CONTRACTS"] = "INIT_CONTRACTS"
    contracts: tuple[Annotated[int, Field(ge=1)], ...] = Field(min_length=1)


class ContractRequest(RoundMessage, XRequest):
    type: Literal["CONTRACT_REQUEST"] = "CONTRACT_REQUEST"
    kind: ClassVar[str] = CONTRACT
    units: Literal[1] = 1


class ContractReply(RoundMessage, XReply):
    type: Literal["CONTRACT_REPLY"] = "CONTRACT_REPLY"
    kind: ClassVar[str] = CONTRACT


class PinsRequest(RoundMessage, XRequest):
    type: Literal["PINS_REQUEST"] = "PINS_REQUEST"
    kind: ClassVar[str] = PINS
    units: int = Field(ge=1)


class PinsReply(RoundMessage, XReply):
    type: Literal["PINS_REPLY"] = "PINS_REPLY"
    kind: ClassVar[str] = PINS


class PinsRelease(RoundMessage, XRelease):
    type: Literal["PINS_RELEASE"] = "PINS_RELEASE"
    kind: ClassVar[str] = PINS
    units: int = Field(ge=1)


class PoisonRequest(RoundMessage, XRequest):
    type: Literal["POISON_REQUEST"] = "POISON_REQUEST"
    kind: ClassVar[str] = POISON
    units: int = Field(ge=1)


class PoisonReply(RoundMessage, XReply):
    type: Literal["POISON_REPLY"] = "POISON_REPLY"
    kind: ClassVar[str] = POISON


class PoisonRelease(RoundMessage, XRelease):
    type: Literal["POISON_RELEASE"] = "POISON_RELEASE"
    kind: ClassVar[str] = POISON
    units: int = Field(ge=1)


class ContractCompleted(RoundMessage):
    """Elf → mayor: contract ``contract`` of ``round`` is done."""

    type: Literal["CONTRACT_COMPLETED"] = "CONTRACT_COMPLETED"
    contract: int = Field(ge=1)


class Stop(RoundMessage):
    """Mayor → every elf: every contract of ``round`` is done; ``final`` after the last round."""

    type: Literal["STOP"] = "STOP"
    final: bool = False


CODEC = Codec(
    InitContracts,
    ContractRequest,
    ContractReply,
    PinsRequest,
    PinsReply,
    PinsRelease,
    PoisonRequest,
    PoisonReply,
    PoisonRelease,
    ContractCompleted,
    Stop,
)

# The requests that carry units (pins, poison): built by kind in ``Elf._request``.
UNITS_REQUEST: dict[str, type[PinsRequest] | type[PoisonRequest]] = {PINS: PinsRequest, POISON: PoisonRequest}
REQUEST: dict[str, type[RoundMessage]] = {CONTRACT: ContractRequest, **UNITS_REQUEST}
REPLY: dict[str, type[RoundMessage]] = {CONTRACT: ContractReply, PINS: PinsReply, POISON: PoisonReply}
RELEASE: dict[str, type[RoundMessage]] = {PINS: PinsRelease, POISON: PoisonRelease}
# "PINS_REPLY" → ("pins", "REPLY")
ELF_MESSAGES = {
    model.model_fields["type"].default: (kind, verb)
    for verb, table in (("REQUEST", REQUEST), ("REPLY", REPLY), ("RELEASE", RELEASE))
    for kind, model in table.items()
}


def elf_name(pid: int) -> str:
    return "mayor" if pid == MAYOR else f"elf-{pid}"


def contract_resource(round_: int, index: int) -> str:
    return f"contract:{round_}.{index}"
