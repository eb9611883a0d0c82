"""Transports that carry protocol messages between separate processes: RabbitMQ (the wire format
wire.py, topology.py, inbox.py, the bus rabbit.py on pika's public API: docs/architecture.md#wire),
membership (membership.py), the participant and monitor services, their settings."""
