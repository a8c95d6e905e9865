"""``python -m dpsynth``: the ``dpsynth`` command line."""

import sys

from .cli import main

sys.exit(main())
