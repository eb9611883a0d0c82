"""The protocols, one module each, all sans-I/O (see ``mutexlab.protocol``)."""
