"""The package's import graph, read from the code (ast): no cycle, the
command line (pipeline/cli/) is the top layer that no module below it
imports, and one place decides a class (pipeline/classes.py: no other
module compares, tests or combines an exit class; the modules that need
one import it). Held here, not by grepping strings: a renamed or a lazy
import (inside a function) counts the same as one at the top of a file,
and a class rule is found by what the code does with an exit class, not
by how it is spelled."""

import ast
import os
import sys
import unittest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, TOP)

PACKAGE = os.path.join(TOP, 'pipeline')

# Modules that still define their own subcommands and so import
# pipeline.cli's Command (or guard): none left (boot, machine, the
# results' and the analysis' commands moved into pipeline/cli/ as config,
# artifacts and build did). The list only shrinks.
NOT_YET_MOVED: set[str] = set()


def module_name(path):
    rel = os.path.relpath(path, TOP)[:-3].split(os.sep)
    if rel[-1] == '__init__':
        rel = rel[:-1]
    return '.'.join(rel)


def modules():
    """{module name: path} of every module of the package."""
    out = {}
    for d, _, files in os.walk(PACKAGE):
        for f in files:
            if f.endswith('.py'):
                p = os.path.join(d, f)
                out[module_name(p)] = p
    return out


def imports(name, path, known):
    """The package's modules NAME imports, anywhere in its file."""
    with open(path, encoding='utf-8') as f:
        tree = ast.parse(f.read(), path)
    package = name if path.endswith('__init__.py') else \
        name.rpartition('.')[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                parts = package.split('.')
                parts = parts[:len(parts) - node.level + 1]
                base = '.'.join(parts + ([base] if base else []))
            # `from pipeline import config` imports the module config
            targets = [base + '.' + a.name for a in node.names
                       if base + '.' + a.name in known] or [base]
        else:
            continue
        for t in targets:
            while t and t not in known:
                t = t.rpartition('.')[0]
            if t and t != name:
                out.add(t)
    return out


def graph():
    known = modules()
    return {n: imports(n, p, known) for n, p in known.items()}


# The one module of class rules (issue 42: one place decides a class), at
# the bottom: it imports the models alone.
CLASS_RULES = 'pipeline.classes'
# Where a boot's observations become classed reasons (the reasons' own
# rules): it makes a class, and asks CLASS_RULES how they combine.
REASONS = 'pipeline.results.verdict'
# The modules that need a class decided, and so import CLASS_RULES: the
# boot's class, record-failure, the summary's (and its LOST rule),
# compare's "regressed", the baseline's, rerun-failed's "green", and the
# shell's (scripts/pipeline class: build-and-boot, check, ci/variant-job,
# bisect-step).
ASKERS = {REASONS, 'pipeline.results', 'pipeline.analysis.summary',
          'pipeline.analysis.compare', 'pipeline.analysis.baseline',
          'pipeline.analysis.selection', 'pipeline.cli.classes',
          'pipeline.page.model'}


def _reads_class(node):
    """NODE reads an exit class (x.exit_class, x['exit_class'],
    x.get('exit_class'), ExitClass.X) other than as the argument of a call
    into pipeline.classes (classes.green(r.exit_class) asks, decides
    nothing)."""
    if isinstance(node, ast.Call) and \
            isinstance(node.func, ast.Attribute) and \
            isinstance(node.func.value, ast.Name) and \
            node.func.value.id == 'classes':
        return False
    if isinstance(node, ast.Attribute) and node.attr == 'exit_class':
        return True
    if isinstance(node, ast.Attribute) and \
            isinstance(node.value, ast.Name) and node.value.id == 'ExitClass':
        return True
    if isinstance(node, ast.Constant) and node.value == 'exit_class':
        return True
    return any(_reads_class(c) for c in ast.iter_child_nodes(node))


def class_rules(path):
    """The lines of PATH where an exit class is compared, tested, ordered
    or combined: a rule about classes."""
    with open(path, encoding='utf-8') as f:
        tree = ast.parse(f.read(), path)
    deciding = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) \
                and isinstance(node.left, ast.Constant):
            continue    # '%d %s' % (...): a class printed, not decided
        if isinstance(node, (ast.Compare, ast.BoolOp, ast.BinOp)):
            deciding.append(node)
        elif isinstance(node, ast.UnaryOp) and \
                isinstance(node.op, ast.Not):
            deciding.append(node)
        elif isinstance(node, (ast.If, ast.IfExp, ast.While, ast.Assert)):
            deciding.append(node.test)
        elif isinstance(node, ast.comprehension):
            deciding.extend(node.ifs)
        elif isinstance(node, ast.Call) and \
                isinstance(node.func, ast.Name) and \
                node.func.id in ('max', 'min', 'sorted', 'sum', 'any',
                                 'all', 'bool'):
            deciding.append(node)
    return sorted({n.lineno for n in deciding if _reads_class(n)})


def is_cli(name):
    return name == 'pipeline.cli' or name.startswith('pipeline.cli.')


class Layers(unittest.TestCase):
    def test_the_graph_is_read(self):
        g = graph()
        # (a reader that found nothing would pass every test below)
        self.assertIn('pipeline.config', g['pipeline.cli.config'])
        self.assertIn('pipeline.manifest', g['pipeline.cli.artifacts'])

    def test_no_import_cycle(self):
        g = graph()
        # The package itself (pipeline/__init__.py: Fail, sha256) is the
        # bottom; its own imports stay inside functions of the standard
        # library, so it is no part of a cycle either.
        state = {}

        def visit(n, path):
            state[n] = 'open'
            for m in sorted(g[n]):
                if m == 'pipeline':
                    continue
                if state.get(m) == 'open':
                    self.fail('import cycle: %s' % ' -> '.join(
                        path[path.index(m):] + [m]))
                if m not in state:
                    visit(m, path + [m])
            state[n] = 'done'

        for n in sorted(g):
            if n not in state:
                visit(n, [n])

    def test_nothing_below_the_command_line_imports_it(self):
        g = graph()
        wrong = sorted('%s -> %s' % (n, m) for n, ms in g.items()
                       for m in ms if is_cli(m) and not is_cli(n)
                       and n not in NOT_YET_MOVED
                       and n != 'pipeline.__main__')
        self.assertEqual([], wrong)

    def test_the_list_of_modules_not_yet_moved_only_names_real_offenders(self):
        g = graph()
        for n in sorted(NOT_YET_MOVED):
            self.assertTrue(any(is_cli(m) for m in g[n]),
                            '%s no longer imports the command line: take '
                            'it off NOT_YET_MOVED' % n)



class OnePlaceDecidesAClass(unittest.TestCase):
    def test_the_class_rules_are_the_bottom_layer(self):
        g = graph()
        self.assertEqual({'pipeline.models'}, g[CLASS_RULES])

    def test_the_modules_that_need_a_class_decided_ask_the_one_place(self):
        g = graph()
        self.assertEqual([], sorted(n for n in ASKERS
                                    if CLASS_RULES not in g[n]))

    def test_no_other_module_compares_tests_or_combines_a_class(self):
        wrong = []
        for name, path in sorted(modules().items()):
            if name in (CLASS_RULES, 'pipeline.models'):
                continue
            for line in class_rules(path):
                wrong.append('%s:%d' % (os.path.relpath(path, TOP), line))
        self.assertEqual([], wrong)

    def test_the_reader_finds_a_class_rule(self):
        # (a reader that found nothing would pass the test above)
        import tempfile
        with tempfile.NamedTemporaryFile('w', suffix='.py') as f:
            f.write("worst = max(r.exit_class for r in rows)\n"
                    "if res.get('exit_class', 2) == 0:\n    pass\n"
                    "ok = classes.green(r.exit_class)\n"
                    "n = sum(1 for r in rows if r.exit_class >= 2)\n"
                    "print('%d' % r.exit_class)\n")
            f.flush()
            self.assertEqual([1, 2, 5], class_rules(f.name))


if __name__ == '__main__':
    unittest.main()
