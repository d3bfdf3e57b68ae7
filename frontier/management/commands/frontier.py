"""``manage.py frontier stats|rebuild|purge NAME``: inspect and repair a URL pool."""

from __future__ import annotations

import json
import sys

from django.core.management.base import BaseCommand, CommandError, CommandParser

from frontier.models import Pool
from frontier.pool import UrlPool


class Command(BaseCommand):
    help = "Inspect or repair a frontier pool: stats, rebuild (Redis from SQL), purge."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        for action, text in (
            ("stats", "print the pool's counters as JSON"),
            ("rebuild", "restore the pool's Redis schedule from SQL"),
            ("purge", "delete the pool: its Redis keys and SQL rows"),
        ):
            cmd = sub.add_parser(action, help=text)
            cmd.add_argument("name", help="pool name, e.g. project-42")
            if action == "purge":
                cmd.add_argument("--yes", action="store_true", help="do not ask for confirmation")

    def handle(self, *args, action: str, name: str, **options) -> None:
        if not Pool.objects.filter(name=name).exists():
            known = ", ".join(Pool.objects.values_list("name", flat=True)) or "none"
            raise CommandError(f"no pool named {name!r}; known: {known}")
        pool = UrlPool(name)
        if action == "stats":
            self.stdout.write(json.dumps(pool.stats(), indent=2, sort_keys=True))
        elif action == "rebuild":
            tty = sys.stderr.isatty()

            def progress(done: int) -> None:
                if tty:
                    sys.stderr.write(f"\rscheduled {done:,} URLs")
                    sys.stderr.flush()

            total = pool.rebuild(progress=progress)
            if tty:
                sys.stderr.write("\n")
            self.stdout.write(f"rebuilt {name}: {total} URL(s) scheduled")
        else:
            if not options["yes"]:
                raise CommandError("purge deletes every URL of the pool; add --yes to confirm")
            pool.purge()
            self.stdout.write(f"purged {name}")
