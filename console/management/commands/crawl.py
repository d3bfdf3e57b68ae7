"""``manage.py crawl create|start|pause|resume|stop|status|export``: thin over the services."""

from __future__ import annotations

import argparse
import json
import sys

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from console import services
from console.export import FORMATS, export_lines
from console.models import Hub, Project
from console.selectors import project_status


class UsageError(CommandError):
    def __init__(self, message: str) -> None:
        super().__init__(message, returncode=2)


class OneLineParser(CommandParser):
    """Bad arguments: one line on stderr and exit status 2 (a UsageError under call_command)."""

    def error(self, message: str) -> None:
        if self.called_from_command_line:
            self.exit(2, f"{self.prog}: error: {message}\n")
        raise UsageError(message)


class Command(BaseCommand):
    help = "Create, run and inspect crawl projects."

    def create_parser(self, prog_name: str, subcommand: str, **kwargs) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.__class__ = OneLineParser  # Django builds a CommandParser; only error() differs
        return parser

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True, parser_class=OneLineParser)
        create = sub.add_parser("create", help="define a project")
        create.add_argument("name")
        create.add_argument("--seed", action="append", default=[], metavar="URL", required=True)
        create.add_argument("--hub", action="append", default=[], metavar="URL")
        create.add_argument("--refresh-span", type=float, default=3600.0, metavar="SECONDS")
        create.add_argument("--allow", action="append", default=[], metavar="HOST")
        create.add_argument("--max-depth", type=int, default=5)
        create.add_argument("--max-pages", type=int)
        create.add_argument("--crawl-delay", type=float, default=1.0)
        create.add_argument("--ignore-robots", action="store_true")
        create.add_argument("--concurrency", type=int, default=1)
        create.add_argument("--batch-size", type=int, default=50)
        for action in ("start", "pause", "resume", "stop"):
            sub.add_parser(action, help=f"{action} a project").add_argument("name")
        sub.add_parser("kick", help="restart batch jobs lost with a worker").add_argument("name")
        status = sub.add_parser("status", help="state and counters")
        status.add_argument("name")
        status.add_argument("--json", action="store_true")
        export = sub.add_parser("export", help="stream every page as JSON lines or CSV")
        export.add_argument("name")
        export.add_argument("--format", choices=FORMATS, default="jsonl")
        export.add_argument("--output", type=argparse.FileType("w", encoding="utf-8"), default="-")
        export.add_argument("--after", type=int, default=0, help="resume after this page id")

    def handle(self, *args, action: str, name: str, **options) -> None:
        if action == "create":
            self._create(name, options)
            return
        try:
            project = Project.objects.get(name=name)
        except Project.DoesNotExist:
            raise UsageError(f"no project named {name!r}") from None
        if action == "status":
            self._status(project, as_json=options["json"])
        elif action == "kick":
            try:
                count = services.project_revive_chains(project=project)
            except services.ProjectStateError as exc:
                raise UsageError(str(exc)) from None
            self.stdout.write(f"{project.name}: {count} job chain(s) restarted")
        elif action == "export":
            self._export(project, options)
        else:
            service = getattr(services, f"project_{action}")
            try:
                project = service(project=project)
            except services.ProjectStateError as exc:
                raise UsageError(str(exc)) from None
            self.stdout.write(f"{project.name}: {project.state}")

    def _create(self, name: str, options: dict) -> None:
        project = Project(
            name=name,
            seeds="\n".join(options["seed"]),
            allowed_hosts="\n".join(options["allow"]),
            max_depth=options["max_depth"],
            max_pages=options["max_pages"],
            crawl_delay=options["crawl_delay"],
            obey_robots=not options["ignore_robots"],
            concurrency=options["concurrency"],
            batch_size=options["batch_size"],
        )
        hubs = [Hub(url=url, refresh_span=options["refresh_span"]) for url in options["hub"]]
        try:
            project.full_clean()
            for hub in hubs:
                hub.full_clean(exclude=["project"])
        except ValidationError as exc:
            detail = "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in exc.message_dict.items())
            raise UsageError(detail) from None
        with transaction.atomic():
            project.save()
            for hub in hubs:
                hub.project = project
                hub.save()
        self.stdout.write(f"created project {project.name} (id {project.pk})")

    def _status(self, project: Project, *, as_json: bool) -> None:
        status = project_status(project=project)
        if as_json:
            self.stdout.write(json.dumps(status, sort_keys=True))
            return
        for key, value in status.items():
            self.stdout.write(f"{key:>17}: {value}")

    def _export(self, project: Project, options: dict) -> None:
        out = options["output"]
        tty = sys.stderr.isatty() and out is not sys.stdout
        cursor, count = options["after"], 0
        for page_id, line in export_lines(project, options["format"], after=options["after"]):
            out.write(line)
            cursor = page_id
            count += 1
            if tty and count % 5000 == 0:
                sys.stderr.write(f"\rexported {count:,} lines")
        out.flush()
        if tty:
            sys.stderr.write("\n")
        sys.stderr.write(f"exported {count:,} line(s); resume with --after {cursor}\n")
