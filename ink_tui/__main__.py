from ink_tui.cli import main

raise SystemExit(main())
