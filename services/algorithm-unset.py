"""What docker-compose.yml mounts at /algorithm/algorithm.py when ALGORITHM_FILE is not set
(docs/rabbitmq.md#your-algorithm-in-compose): an algorithm naming that path is refused, saying why."""

raise RuntimeError(
    "ALGORITHM_FILE is not set: compose mounts your algorithm's .py file at /algorithm/algorithm.py "
    "only when ALGORITHM_FILE names it (docs/rabbitmq.md#your-algorithm-in-compose)"
)
