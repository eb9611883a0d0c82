"""One module per ``mutexlab`` subcommand."""
