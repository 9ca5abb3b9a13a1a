"""``python -m toolsearch_lab.cli``: the ``toolsearch-lab`` command without the installed script."""

import sys

from toolsearch_lab.cli.main import main

sys.exit(main())
