"""``python -m fairengine`` runs the command line."""

from fairengine.cli import main

raise SystemExit(main())
