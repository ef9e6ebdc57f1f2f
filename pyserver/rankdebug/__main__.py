from rankdebug.cli import main

raise SystemExit(main())
