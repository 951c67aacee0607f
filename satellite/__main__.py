"""``python -m satellite``."""

import sys

from .cli import main

if __name__ == "__main__":  # not when a worker process re-imports the main module
    sys.exit(main())
