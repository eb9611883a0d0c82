"""mutexlab: distributed mutual exclusion as sans-I/O state machines.

The protocols (``mutexlab.protocols``) are pure; the simulator (``mutexlab.sim``) and the
RabbitMQ transport (``mutexlab.transport``) drive them; ``mutexlab.audit`` judges traces.
"""

__version__ = "0.1.0"
