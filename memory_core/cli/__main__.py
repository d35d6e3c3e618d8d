"""``python -m memory_core.cli`` runs the ``atlas`` command."""

import sys

from memory_core.cli import main

sys.exit(main())
