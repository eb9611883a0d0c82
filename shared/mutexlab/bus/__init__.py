"""The bus (docs/wire.md#the-bus): what a process needs to send and receive over RabbitMQ."""
