"""``python -m mutexlab.services ROLE``."""

import sys

from . import main, roles

if len(sys.argv) != 2:
    print(f"usage: python -m mutexlab.services {{{','.join(roles())}}}", file=sys.stderr)
    sys.exit(2)
sys.exit(main(sys.argv[1]))
