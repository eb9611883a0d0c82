"""Deliberately broken variants, run over RabbitMQ by the integration tests (ALGORITHM=mutexlab_broken.X):
the monitor must flag each of them. Never used outside the tests. Every broken variant the tests use
lives here (tests/conftest.py ``broken`` loads one by name)."""


def recast(setup, cls, pids=None):
    """``setup`` with the protocols of ``pids`` (all by default) made instances of ``cls``, their state kept."""
    for pid, protocol in setup.protocols.items():
        if pids is None or pid in pids:
            protocol.__class__ = cls
    return setup
