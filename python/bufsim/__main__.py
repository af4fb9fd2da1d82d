import sys

from bufsim.cli import main

sys.exit(main())
