"""Transports that carry protocol messages between separate processes: RabbitMQ (rabbit.py),
membership (membership.py), the participant and monitor services, their settings."""
