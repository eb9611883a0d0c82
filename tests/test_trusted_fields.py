"""``fastpath.trusted``'s one shared fields set per frozen model: equal to what validation makes,
never written through one message so that another's changes, and a model that is not frozen keeps
a set per message."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict

from mutexlab import fastpath
from mutexlab.messages import Message
from mutexlab.protocols import bees


class Loose(Message):
    """A model that is not frozen: pydantic adds to its fields set on assignment."""

    model_config = ConfigDict(frozen=False, extra="forbid")
    type: Literal["LOOSE"] = "LOOSE"
    n: int = 0


def test_a_frozen_models_messages_share_one_fields_set_equal_to_validations():
    make = fastpath.trusted(bees.ACKflower)
    one, two = make(1, 2, 3), make(4, 5, 6)
    assert one.model_fields_set is two.model_fields_set
    assert one.model_fields_set == bees.ACKflower(sender=1, ts=2, req_ts=3).model_fields_set


def test_a_copy_with_an_update_leaves_the_shared_set_alone():
    make = fastpath.trusted(bees.ACKflower)
    one, two = make(1, 2, 3), make(4, 5, 6)
    before = set(two.model_fields_set)
    copied = one.model_copy(update={"req_ts": 7})
    assert copied.req_ts == 7 and two.model_fields_set == before and one.model_fields_set == before


def test_a_model_that_is_not_frozen_gets_a_set_per_message():
    make = fastpath.trusted(Loose)
    one, two = make(1, 2, 3), make(4, 5, 6)
    assert one.model_fields_set is not two.model_fields_set
    before = set(two.model_fields_set)
    one.__pydantic_fields_set__.discard("n")  # as if never set; then set by assignment
    one.n = 9
    assert "n" in one.model_fields_set and two.model_fields_set == before
