"""The elf service (configuration from the environment: see mutexlab.transport.settings)."""

import sys

from mutexlab.services import main

sys.exit(main("elf"))
