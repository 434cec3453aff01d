"""``python -m dgxstudio`` is the ``dgxstudio`` command."""

import sys

from .cli import main

sys.exit(main())
