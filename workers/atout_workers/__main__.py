"""``python -m atout_workers worker|beat ...`` (what ``atout-arena worker|beat`` runs)."""

import sys

from atout_workers.cli import main

sys.exit(main())
