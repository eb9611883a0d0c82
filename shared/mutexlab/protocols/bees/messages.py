"""The bees' states, messages and names: what the machine, the setup and the audit share."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field

from ...messages import Codec, Message

# the problem's words (problems/bees_rules.py), re-exported
from ...problems.bees_rules import FLOWER as FLOWER
from ...problems.bees_rules import expected_eggs as expected_eggs
from ...problems.bees_rules import reed_name as reed_name


class BeeState(StrEnum):
    REST = "REST"
    WAIT_REED = "WAIT_REED"
    ON_REED = "ON_REED"
    WAIT_FLOWER = "WAIT_FLOWER"
    ON_FLOWER = "ON_FLOWER"
    DEAD = "DEAD"
    RETIRED = "RETIRED"


FINAL_STATES = (BeeState.DEAD, BeeState.RETIRED)
WAITING_STATES = (BeeState.WAIT_REED, BeeState.WAIT_FLOWER)


class REQreed(Message):
    type: Literal["REQreed"] = "REQreed"


class ACKreed(Message):
    type: Literal["ACKreed"] = "ACKreed"
    req_ts: int = Field(ge=0)  # timestamp of the REQreed this answers


class REQflower(Message):
    type: Literal["REQflower"] = "REQflower"


class ACKflower(Message):
    type: Literal["ACKflower"] = "ACKflower"
    req_ts: int = Field(ge=0)  # timestamp of the REQflower this answers


class RELEASEreed(Message):
    """The sender leaves for good: it left ``reed`` holding ``cocoons`` eggs (``reed`` 0: it
    held none, status NO_ROOM)."""

    type: Literal["RELEASEreed"] = "RELEASEreed"
    reed: int = Field(ge=0)
    status: Literal["FULL", "AVAILABLE", "NO_ROOM"]
    cocoons: int = Field(ge=0)


CODEC = Codec(REQreed, ACKreed, REQflower, ACKflower, RELEASEreed)


def bee_name(pid: int) -> str:
    return f"bee-{pid}"
