from evald.cli import main

raise SystemExit(main())
