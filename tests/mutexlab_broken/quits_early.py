"""Ricart–Agrawala whose nodes stop one request short of their workload: every node ends
released and nobody waits, so only the run header's ``requests`` shows the work left undone."""

from mutexlab.protocols import ricart_agrawala


def make_setup(processes: int, options: dict, seed: int = 0):
    setup = ricart_agrawala.make_setup(processes, options, seed)
    for node in setup.protocols.values():
        node.requests_left -= 1  # the header still says ``requests``
    return setup
