"""In-process unit tests of the no-work path (pipeline/fastpath.py) on
objdump -dr --no-show-raw-insn text: a real function of the default
variant's kernel/entry/common.o, and small ones for each rule
(tests/tooling/fastpath.bats runs scripts/fastpath-insns on objects gcc
compiles).

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import os
import sys
import unittest

sys.dont_write_bytecode = True
TOP = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                   '..', '..'))
sys.path.insert(0, TOP)
from pipeline import fastpath  # noqa: E402

# The default variant's syscall_exit_to_user_mode (7 December 2026,
# gcc 12.2), with the relocations objdump -dr prints before its first
# instruction (the section's, at lower offsets) and within it.
SYSCALL_EXIT = """
Disassembly of section .text:

000000000000008c <syscall_exit_to_user_mode>:
  8c:\tendbr64
\t\t\t7: R_X86_64_PC32\tpcpu_hot+0x4
\t\t\t86: R_X86_64_PLT32\t__ct_user_exit-0x4
  90:\tpush   %r12
  92:\tpush   %rbp
  93:\tmov    %rdi,%rbp
  96:\tpush   %rbx
  97:\tcall   9c <syscall_exit_to_user_mode+0x10>
\t\t\t98: R_X86_64_PC32\t.text+0x40a
  9c:\tcli
  9d:\tcall   a2 <syscall_exit_to_user_mode+0x16>
\t\t\t9e: R_X86_64_PC32\t.text+0x24d
  a2:\tmov    %gs:0x0(%rip),%r12        # aa <syscall_exit_to_user_mode+0x1e>
\t\t\ta6: R_X86_64_PC32\tconst_pcpu_hot-0x4
  aa:\tmov    (%r12),%rbx
  ae:\ttest   $0x2304e,%ebx
  b4:\tje     f8 <syscall_exit_to_user_mode+0x6c>
  b6:\tsti
  b7:\ttest   $0x8,%bl
  ba:\tje     c1 <syscall_exit_to_user_mode+0x35>
  bc:\tcall   c1 <syscall_exit_to_user_mode+0x35>
\t\t\tbd: R_X86_64_PLT32\tschedule-0x4
  c1:\ttest   $0x20004,%ebx
  c7:\tje     d1 <syscall_exit_to_user_mode+0x45>
  c9:\tmov    %rbp,%rdi
  cc:\tcall   d1 <syscall_exit_to_user_mode+0x45>
\t\t\tcd: R_X86_64_PLT32\tarch_do_signal_or_restart-0x4
  d1:\ttest   $0x2,%bl
  d4:\tje     de <syscall_exit_to_user_mode+0x52>
  d6:\tmov    %rbp,%rdi
  d9:\tcall   de <syscall_exit_to_user_mode+0x52>
\t\t\tda: R_X86_64_PC32\t.text+0x4d0
  de:\tmov    0x0(%rip),%eax        # e4 <syscall_exit_to_user_mode+0x58>
\t\t\te0: R_X86_64_PC32\tumcg_used-0x4
  e4:\ttest   %eax,%eax
  e6:\tjle    f0 <syscall_exit_to_user_mode+0x64>
  e8:\tmov    %rbx,%rdi
  eb:\tcall   f0 <syscall_exit_to_user_mode+0x64>
\t\t\tec: R_X86_64_PLT32\t__umcg_exit_to_user_mode-0x4
  f0:\tcli
  f1:\tcall   f6 <syscall_exit_to_user_mode+0x6a>
\t\t\tf2: R_X86_64_PC32\t.text+0x24d
  f6:\tjmp    aa <syscall_exit_to_user_mode+0x1e>
  f8:\tmov    0x8(%r12),%rax
  fd:\ttest   $0x80,%al
  ff:\tje     106 <syscall_exit_to_user_mode+0x7a>
 101:\tcall   106 <syscall_exit_to_user_mode+0x7a>
\t\t\t102: R_X86_64_PLT32\t__task_isol_exit_to_user_mode-0x4
 106:\tmov    %rbx,%rdi
 109:\tcall   10e <syscall_exit_to_user_mode+0x82>
\t\t\t10a: R_X86_64_PC32\t.text+0x27c
 10e:\tmov    0x0(%rip),%eax        # 114 <syscall_exit_to_user_mode+0x88>
\t\t\t110: R_X86_64_PC32\tcontext_tracking_key-0x4
 114:\ttest   %eax,%eax
 116:\tjle    122 <syscall_exit_to_user_mode+0x96>
 118:\tmov    $0x2,%edi
 11d:\tcall   122 <syscall_exit_to_user_mode+0x96>
\t\t\t11e: R_X86_64_PLT32\t__ct_user_enter-0x4
 122:\txor    %eax,%eax
 124:\tmov    $0x1,%ecx
 129:\tmov    %eax,%edx
 12b:\tnop
 12c:\tnop
 12d:\tpop    %rbx
 12e:\tpop    %rbp
 12f:\tpop    %r12
 131:\tret
"""


def function(body: str, name: str = 'f', start: int = 0x10):
    """The function NAME at START of BODY's instruction lines."""
    text = '%016x <%s>:\n%s\n' % (start, name, body)
    fns = fastpath.parse(text, name)
    assert len(fns) == 1, fns
    return fns[0]


class SyscallExitTest(unittest.TestCase):

    def test_the_real_function_returns_past_every_work_test(self):
        fn, = fastpath.parse(SYSCALL_EXIT, 'syscall_exit_to_user_mode')
        self.assertEqual(len(fn.insns), 52)
        path = fastpath.walk(fn)
        self.assertEqual(path.error, '')
        self.assertEqual(path.assumed, [])
        self.assertEqual(path.ended, 'ret')
        decided = [(i.addr, what) for i, what in path.steps
                   if what in ('taken', 'not taken')]
        # the exit work's test, the task isolation flag, context
        # tracking's key: each jumps past its work
        self.assertEqual(decided, [(0xb4, 'taken'), (0xff, 'taken'),
                                   (0x116, 'taken')])
        self.assertEqual(path.count, 29)
        # the section's relocations before the first instruction are not
        # its own
        self.assertEqual(fn.insns[0].reloc, '')
        self.assertEqual(fn.insns[5].reloc, '.text+0x40a')


class RuleTest(unittest.TestCase):

    def walk(self, body):
        return fastpath.walk(function(body))

    def test_each_conditional_jump_as_after_a_zero_result(self):
        for jcc, taken in (('je', 1), ('jz', 1), ('jle', 1), ('jbe', 1),
                           ('jns', 1), ('jge', 1), ('jae', 1), ('jne', 0),
                           ('jnz', 0), ('jg', 0), ('ja', 0), ('js', 0),
                           ('jl', 0), ('jb', 0)):
            path = self.walk('  10:\ttest   %eax,%eax\n'
                             '  12:\tJCC     16 <f+0x6>\n'
                             '  14:\tnop\n'
                             '  15:\tnop\n'
                             '  16:\tret'.replace('JCC', jcc))
            self.assertEqual(path.count, 3 if taken else 5, jcc)
            self.assertEqual(path.assumed, [], jcc)

    def test_a_decision_after_another_flag_setter_is_reported(self):
        for setter in ('cmp    $0x1,%eax', 'sub    $0x1,%eax', 'dec    %eax',
                       'bt     $0x3,%rax', 'call   20 <g>', 'cmp    %rax,%rbx',
                       'vfrob  %xmm0,%xmm1'):
            path = self.walk('  10:\t%s\n'
                             '  12:\tjne    15 <f+0x5>\n'
                             '  14:\tret\n'
                             '  15:\tud2' % setter)
            self.assertEqual(path.count, 3, setter)
            self.assertEqual(len(path.assumed), 1, setter)
            self.assertIn('+0x2 jne after %s (+0x0): not taken'
                          % ' '.join(setter.split()), path.assumed[0])

    def test_exact_setters_and_flag_neutral_instructions(self):
        for setter in ('testb  $0x10,0x19(%rax)', 'test   %rdi,%rdi',
                       'cmpb   $0x0,0x0(%rip)', 'xor    %eax,%eax'):
            path = self.walk('  10:\tSETTER\n'
                             '  11:\tmov    0x8(%rdi),%rax\n'
                             '  12:\tlea    0x8(%rdi),%rax\n'
                             '  13:\tsti\n'
                             '  14:\tjne    17 <f+0x7>\n'
                             '  16:\tret\n'
                             '  17:\tud2'.replace('SETTER', setter))
            self.assertEqual((path.count, path.assumed), (6, []), setter)
        # a test of two different things proves nothing
        path = self.walk('  10:\ttest   %eax,%ebx\n'
                         '  12:\tje     15 <f+0x5>\n'
                         '  14:\tud2\n'
                         '  15:\tret')
        self.assertEqual(path.count, 3)
        self.assertEqual(len(path.assumed), 1)

    def test_a_loop_is_an_error(self):
        path = self.walk('  10:\tmov    (%rdi),%eax\n'
                         '  12:\ttest   %eax,%eax\n'
                         '  14:\tje     10 <f>\n'
                         '  16:\tret')
        self.assertIsNone(path.count)
        self.assertEqual(path.error, 'loop at +0x0')

    def test_jmp_is_followed_and_a_tail_call_ends_the_path(self):
        # in a vmlinux: a target outside the function
        path = self.walk('  10:\tjmp    14 <f+0x4>\n'
                         '  12:\tud2\n'
                         '  14:\tpop    %rbx\n'
                         '  15:\tjmp    ffffffff81e0c0e0 '
                         '<__x86_return_thunk>')
        self.assertEqual((path.count, path.ended),
                         (3, 'jumps to __x86_return_thunk'))
        # in a .o: the relocated jump's printed target is the next address
        path = self.walk('  10:\tjmp    15 <f+0x5>\n'
                         '\t\t\t11: R_X86_64_PLT32\t__blk_flush_plug-0x4\n'
                         '  15:\tud2')
        self.assertEqual((path.count, path.ended),
                         (1, 'jumps to __blk_flush_plug'))
        # a conditional one, taken, leaves the same way
        path = self.walk('  10:\ttest   %eax,%eax\n'
                         '  12:\tje     ffffffff81e0c0e0 '
                         '<__x86_return_thunk>\n'
                         '  18:\tud2')
        self.assertEqual((path.count, path.ended),
                         (2, 'jumps to __x86_return_thunk'))

    def test_what_cannot_be_walked_says_where(self):
        for body, error in (
                ('  10:\tud2', 'reaches ud2 at +0x0'),
                ('  10:\tnotrack jmp *%rax', 'indirect jump at +0x0'),
                ('  10:\tjmp    *0x0(,%rax,8)\n'
                 '\t\t\t13: R_X86_64_32S\t.rodata+0x40',
                 'indirect jump at +0x0'),
                ('  10:\tjmp    11 <f+0x1>\n  12:\tret',
                 'jump into an instruction at +0x0'),
                ('  10:\tnop', 'runs off the end of f'),
                ('  10:\tjmp    ffffffff81000000 <f.cold>',
                 'jump to its cold part f.cold at +0x0, not followed'),
                ('  10:\tjmp    15 <f+0x5>\n'
                 '\t\t\t11: R_X86_64_PC32\t.text.unlikely+0x1c\n'
                 '  15:\tret',
                 'jump to its cold part .text.unlikely+0x1c at +0x0, '
                 'not followed')):
            path = self.walk(body)
            self.assertIsNone(path.count, body)
            self.assertEqual(path.error, error)

    def test_a_call_counts_one_and_the_path_goes_on(self):
        path = self.walk('  10:\tcall   *%rax\n'
                         '  12:\tcall   15 <f+0x5>\n'
                         '\t\t\t13: R_X86_64_PLT32\tg-0x4\n'
                         '  17:\tret')
        self.assertEqual(path.count, 3)

    def test_two_functions_of_one_name_are_no_path(self):
        text = ('0000000000000010 <f>:\n  10:\tret\n\n'
                '0000000000000020 <f>:\n  20:\tret\n')
        self.assertEqual(len(fastpath.parse(text, 'f')), 2)


if __name__ == '__main__':
    unittest.main()
