"""The frozen application's entry point: the same as the ``dgxstudio`` command."""
import sys

from dgxstudio.cli import main

sys.exit(main())
