"""Ricart–Agrawala's own code with a *wrongly declared* canonical key: it leaves out the deferred
requests, which the node reads on exit. States that differ only there merge, and the reduced
search answers the wrong nodes on exit. ``check --cross-check`` must report the disagreement."""

from dataclasses import replace

from mutexlab.protocols import ricart_agrawala, ricart_agrawala_reductions
from mutexlab.reduction import Canonical
from mutexlab_broken import recast


class ForgetfulKeyNode(ricart_agrawala.RicartAgrawalaNode):
    """Ricart–Agrawala unchanged: only its declaration is wrong."""


def make_setup(processes: int, options: dict, seed: int = 0):
    return recast(ricart_agrawala.make_setup(processes, options, seed), ForgetfulKeyNode)


def _key(p):
    return (p.state, p.clock.time, p.my_request, frozenset(p.replies), p.requests_left)  # no deferred


SPEC = replace(
    ricart_agrawala.SPEC,
    make_setup=make_setup,
    reductions=replace(
        ricart_agrawala_reductions.REDUCTIONS.only(ForgetfulKeyNode),
        canonical=Canonical(_key, "wrong on purpose: the deferred requests are read on exit"),
    ),
)
