"""``python -m perfcast.cli``: the same as the ``perfcast`` console script."""

import sys

from perfcast.cli import main

sys.exit(main())
