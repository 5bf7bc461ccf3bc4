import sys

from tilecosim.cli import main

sys.exit(main())
