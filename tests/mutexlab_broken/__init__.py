"""Deliberately broken variants, run over RabbitMQ by the integration tests (ALGORITHM=mutexlab_broken.X):
the monitor must flag each of them. Never used outside the tests."""
