import sys

from tilecosim.cli.main import main

sys.exit(main())
