"""`python -m reqstudio.modes.rewrite --original-doc ... --clarifications ...` (seed 003, section 5.1)."""

from reqstudio.modes.rewrite.cli import main

raise SystemExit(main())
