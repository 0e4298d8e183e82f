from lifelong_core.cli import main

raise SystemExit(main())
