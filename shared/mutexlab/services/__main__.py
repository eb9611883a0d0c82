"""``python -m mutexlab.services ROLE``."""

import sys

from . import ROLES, main

if len(sys.argv) != 2:
    print(f"usage: python -m mutexlab.services {{{','.join(ROLES)}}}", file=sys.stderr)
    sys.exit(2)
sys.exit(main(sys.argv[1]))
