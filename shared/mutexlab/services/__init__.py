"""The service entry points: ``main(role)`` for each participant role and the monitor.

Thin by design (docs/architecture.md#layering): ``main`` is ``transport.service.serve``, which
reads the configuration from the environment, sets up logging and hands over to a transport
participant or the monitor. ``services/<role>/main.py`` in the repository (used by docker
compose and by ``mutexlab run``) calls ``main(role)``; so does ``python -m mutexlab.services ROLE``.

Exit codes: 0 done (or refused by membership), 1 the monitor found a safety violation
or a rejected input, 2 bad configuration, 3 the run stalled, never started, or the broker was unreachable.
"""

from ..transport.service import Service, roles
from ..transport.service import serve as main

__all__ = ["Service", "main", "roles"]
