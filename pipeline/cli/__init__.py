"""The one command line: `python3 -m pipeline SUBCOMMAND ...`.

Each subcommand is a Command; a module that has some lists them in its
COMMANDS, and COMMAND_MODULES names those modules. To add a subcommand
(a build or boot stage, say): write its Command in a module of
pipeline/cli/ (the top layer: no module below it imports this package)
and add the module to COMMAND_MODULES; `python3 -m pipeline --help` lists it and
`make` can call it. Its callers (make, the shell steps, CI, the tests)
run it as `scripts/pipeline SUBCOMMAND ...`, the one Python entry point
of scripts/.

Every end of a subcommand is one of the pipeline's exit statuses (README):
guard() makes an uncaught exception, a bad input (Fail) or a usage error
an infrastructure error (2) with a message, never 1, which means a test
failed.

Python 3.11 standard library only (Debian 12).
"""

import argparse
import collections
import importlib
import sys
import traceback
from collections.abc import Callable

from pipeline import Fail, steperror

# the modules with subcommands, in the order --help lists them; _first()
# imports them in this order too, so the light ones that the shell steps
# call most (config, artifacts stale) come first
COMMAND_MODULES = ('pipeline.cli.config', 'pipeline.cli.classes',
                   'pipeline.cli.artifacts', 'pipeline.cli.boot',
                   'pipeline.cli.build', 'pipeline.cli.results',
                   'pipeline.cli.analysis', 'pipeline.cli.baseline',
                   'pipeline.cli.page')


# (a named tuple, not a dataclass: dataclasses imports inspect, 10 ms of
# every call's start, and scripts/pipeline config runs hundreds of times)
class Command(collections.namedtuple(
        'Command', 'name doc configure run subcommands', defaults=((),))):
    """One subcommand. DOC: its first line is the summary --help lists, the
    rest (after a blank line) is printed below its options. CONFIGURE
    adds the arguments to its parser; RUN does the work and returns the
    exit status. A group of subcommands (`build check-config`) has
    SUBCOMMANDS instead, and neither CONFIGURE nor RUN."""
    __slots__ = ()

    @property
    def summary(self) -> str:
        return self.doc.strip().split('\n')[0]

    def parser_args(self) -> dict:
        rest = self.doc.strip().split('\n\n', 1)
        return {'description': self.summary,
                'epilog': rest[1] if len(rest) > 1 else None,
                'formatter_class': argparse.RawDescriptionHelpFormatter}


def commands() -> dict[str, Command]:
    """Every subcommand by name (imported when asked: scripts/entry.py
    imports this module for guard() alone)."""
    out: dict[str, Command] = {}
    for name in COMMAND_MODULES:
        for c in importlib.import_module(name).COMMANDS:
            out[c.name] = c
    return out


def guard(main: Callable[[list], int], argv: list, prog: str) -> int:
    """main(argv), with every abnormal end mapped to exit 2 and a message
    naming PROG. Python itself exits 1 on an uncaught exception, which
    would turn a bug or a bad input into a test failure."""
    try:
        return main(argv)
    except Fail as e:
        print('%s: error: %s' % (prog, e), file=sys.stderr)
        steperror.write(str(e), prog)
        return 2
    except SystemExit as e:
        # argparse: 0 after --help, 2 on a usage error. sys.exit("text")
        # would exit 1: a message is an error here.
        if isinstance(e.code, str):
            print('%s: error: %s' % (prog, e.code), file=sys.stderr)
            steperror.write(e.code, prog)
            return 2
        return e.code or 0
    except KeyboardInterrupt:
        print('%s: interrupted' % prog, file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): nothing left to say.
        return 2
    except Exception as e:  # noqa: BLE001 - the point of this frame
        traceback.print_exc()
        message = 'internal error (%s: %s); this is a bug in %s' % (
            type(e).__name__, e, prog)
        print('%s: error: %s' % (prog, message), file=sys.stderr)
        steperror.write(message, prog)
        return 2


def parser(prog: str = 'pipeline',
           only: Command | None = None) -> argparse.ArgumentParser:
    """The command line; with ONLY, that subcommand's alone (imported
    alone: scripts/pipeline config runs many times a build)."""
    ap = argparse.ArgumentParser(
        prog=prog, description='kernel-pipeline: the stages of the main '
        'job and the tools around its results.',
        epilog='Each subcommand answers --help. Exit statuses: 0 success, '
        '1 a test failed (or regressed), 2 infrastructure, input or usage '
        'error, 3 the kernel crashed or reported a bug.')
    sub = ap.add_subparsers(dest='command', required=True,
                            metavar='SUBCOMMAND')
    for c in [only] if only else commands().values():
        _configure(sub.add_parser(c.name, help=c.summary, **c.parser_args()),
                   c)
    return ap


def _configure(p: argparse.ArgumentParser, c: Command) -> None:
    """P, the parser of C: its arguments, or its group's subcommands."""
    if not c.subcommands:
        c.configure(p)
        p.set_defaults(run=c.run)
        return
    sub = p.add_subparsers(dest='command_' + c.name, required=True,
                           metavar='SUBCOMMAND')
    for s in c.subcommands:
        _configure(sub.add_parser(s.name, help=s.summary, **s.parser_args()),
                   s)


def _first(name: str) -> dict[str, Command]:
    """The top-level subcommands of the first module of COMMAND_MODULES
    that has NAME, importing no further (scripts/pipeline config runs
    many times a build: it imports its own module only); all of them when
    none has it."""
    for module in COMMAND_MODULES:
        cs = {c.name: c for c in importlib.import_module(module).COMMANDS}
        if name in cs:
            return cs
    return commands()


def _path(argv: list) -> list[Command]:
    """The subcommand ARGV names and the groups above it, outermost first
    (as far as ARGV names them)."""
    out: list[Command] = []
    table = _first(argv[0]) if argv else {}
    for arg in argv:
        c = table.get(arg)
        if c is None:
            break
        out.append(c)
        table = {s.name: s for s in c.subcommands}
    return out


def main(argv: list | None = None, prog: str = 'pipeline') -> int:
    """python3 -m pipeline."""
    argv = sys.argv[1:] if argv is None else argv

    path = _path(argv)

    def run(args):
        a = parser(prog, path[0] if path else None).parse_args(args)
        return a.run(a)
    # (errors name the subcommand, as a script's name its script)
    name = ' '.join(c.name for c in path)
    return guard(run, argv, '%s %s' % (prog, name) if name else prog)

