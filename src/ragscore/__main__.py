"""Run the command line: ``python -m ragscore``."""

import sys

from ragscore.cli import main

sys.exit(main())
