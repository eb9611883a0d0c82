"""``Model.trusted(...)`` (transitional: ``fastpath.trusted(Model)`` under the name the bees call):
the unvalidated constructor for a protocol's own known-valid values must give the very object
validation gives, so traces and equality cannot tell them apart."""

from __future__ import annotations

import pytest

from mutexlab import fastpath
from mutexlab.messages import Message
from mutexlab.protocols import bees, elves, ricart_agrawala

CASES = [
    (bees.ACKflower, {"sender": 3, "ts": 17, "req_ts": 9}),
    (bees.ACKreed, {"sender": 1, "ts": 0, "req_ts": 0}),
    (bees.REQreed, {"sender": 2, "ts": 5}),
    (bees.RELEASEreed, {"sender": 2, "ts": 40, "reed": 3, "status": "FULL", "cocoons": 15}),
    (ricart_agrawala.Reply, {"sender": 4, "ts": 8}),
    (elves.ContractRequest, {"sender": 1, "ts": 2, "round": 3, "units": 1}),  # `type` not third
]


@pytest.mark.parametrize("model, fields", CASES, ids=[c[0].__name__ for c in CASES])
def test_trusted_builds_what_validation_builds(model, fields):
    made, valid = model.trusted(*fields.values()), model(**fields)
    assert type(made) is model and made == valid and hash(made) == hash(valid)
    assert list(made.__dict__.items()) == list(valid.__dict__.items())
    assert made.model_fields_set == valid.model_fields_set and repr(made) == repr(valid)
    assert made.model_dump_json() == valid.model_dump_json()
    assert model.trusted is not Message.trusted
    assert repr(fastpath.trusted(model)(*fields.values())) == repr(made)


def test_trusted_refuses_a_wrong_number_of_fields():
    with pytest.raises(TypeError):
        bees.ACKflower.trusted(1, 2)
    with pytest.raises(TypeError, match="sender, ts, reed, status, cocoons"):
        bees.RELEASEreed.trusted(1, 2, 3)
    with pytest.raises(TypeError, match="concrete message models"):
        Message.trusted(1, 2)
