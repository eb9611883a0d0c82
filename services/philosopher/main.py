"""The philosopher service: a solution of the dining philosophers, named by ALGORITHM (a .py file)."""

import sys

from mutexlab.services import main

sys.exit(main("philosopher"))
