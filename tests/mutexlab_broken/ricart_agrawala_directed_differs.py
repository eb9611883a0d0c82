"""Ricart–Agrawala whose node-2 never replies when it runs directed over RabbitMQ (``DIRECTED`` in
its environment) but does in the simulator: a program that behaves differently on replay.
``mutexlab replay --over-rabbitmq`` must name the step where the real run left the scenario, and
never judge the run against it (tests/test_replay_rabbitmq.py)."""

import os

from mutexlab.protocol import Send
from mutexlab.protocols import ricart_agrawala
from mutexlab_broken import recast


class DiffersWhenDirected(ricart_agrawala.RicartAgrawalaNode):
    def on_message(self, msg):
        effects = super().on_message(msg)
        if os.environ.get("DIRECTED"):
            return [e for e in effects if not (isinstance(e, Send) and e.msg.type == "REPLY")]
        return effects


def make_setup(processes: int, options: dict, seed: int = 0):
    return recast(ricart_agrawala.make_setup(processes, options, seed), DiffersWhenDirected, pids={2})
