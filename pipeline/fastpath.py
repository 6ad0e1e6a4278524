"""A function's instructions in an x86-64 ELF (a vmlinux or a .o), for
scripts/fastpath-insns (issue 44, defect 3; issue 45, defect 6): their
static count, and its no-work path.

The static count is every instruction of the function's body, as
`objdump -d` prints it. It is a weak proxy for what a task pays: code
added off the fast path (a call in a loop's tail, say) counts the same as
code on it. The no-work path is the instructions a task runs through the
function when every flag and word the function tests is zero, which is
what a task that never uses the series has on its way to sleep and back to
user space. It is read from the disassembly alone, deterministically
(objdump -dr --no-show-raw-insn, AT&T syntax), from the entry on:

- every instruction executed counts one; a `call` counts one and the walk
  goes on after it (what it calls is a function of its own);
- a `jmp` is followed; one that leaves the function (a tail call, a
  retpoline or return thunk such as __x86_return_thunk: a target outside
  the function, or a relocation on the jump in a .o, where the target
  objdump prints is only the unrelocated next address) ends the path and
  counts;
- a conditional jump is decided as if the last flag-setting instruction
  had a zero result: ZF=1, SF=0, CF=0, OF=0 (PF=1), so je/jz/jle/jbe/jns/
  jge/jae are taken and jne/jnz/jg/ja/js/jl/jb not. That is exact after a
  `test` of something against itself or against an immediate, after a
  `cmp $0x0,X` (0 - 0) and after `xor R,R`. After any other flag setter (a
  `cmp` with something else, `sub`, `dec`, `bt`, a call, an instruction
  this module does not know) the same rule decides, but the decision is
  an assumption and is reported with the path (`assumed`), never silent;
- `ret` ends the path (and counts).

A walk that visits an address twice (a loop the zero words do not leave),
reaches a trap (ud2, int3, hlt), an indirect jump, a jump that is not to
an instruction of the function or is to its cold part (gcc's F.cold:
not followed, so not counted as a tail call either), or runs off the
function's end, has no count: the error says where.

Python 3.11 standard library only (Debian 12).
"""

import re
import subprocess
from typing import NamedTuple

from pipeline import Fail

# Conditional jumps under ZF=1, SF=0, CF=0, OF=0, PF=1: taken or not.
TAKEN = frozenset('je jz jle jng jbe jna jns jge jnl jae jnb jnc jno jp jpe'
                  .split())
NOT_TAKEN = frozenset('jne jnz jg jnle ja jnbe js jl jnge jb jnae jc jo jnp '
                      'jpo'.split())

# Instructions that leave the arithmetic flags alone (clac/stac and
# cli/sti touch AC and IF only). Any mnemonic not here and not a flag
# setter below is taken to set the flags in a way this module cannot
# decide: a conditional jump after it is reported as assumed.
KEEPS_FLAGS = re.compile(
    r'(mov|cmov|set|lea|push|pop|nop|xchg|endbr|cli$|sti$|clac$|stac$|'
    r'bswap|cbtw|cwtl|cltq|cwtd|cltd|cqto|[lms]fence|pause|prefetch|'
    r'clflush|rdtsc|rdpid|rdgsbase|rdfsbase|wrgsbase|wrfsbase|rdmsr|'
    r'wrmsr|cpuid|swapgs|stos|lods|serialize|v?movdq|v?pxor|xorp|int3|'
    r'ud2|hlt|call|jmp|ret)')
SETS_FLAGS = re.compile(
    r'(test|cmp|add|sub|and|or|xor|inc|dec|neg|adc|sbb|sh[lr]d?|sa[lr]|'
    r'ro[lr]|rc[lr]|bt[src]?|bs[fr]|tzcnt|lzcnt|popcnt|i?mul|i?div|'
    r'cmpxchg(8b|16b)?|xadd|andn|bls[ir]|blsmsk|scas|cmps|popf|sahf|'
    r'ptest|u?comis[sd])[bwlq]?$')
# Prefixes objdump prints before the mnemonic.
PREFIXES = frozenset('lock rep repz repnz repe repne notrack bnd cs ds es '
                     'ss fs gs data16 addr32 rex rex.W'.split())
TRAPS = frozenset(('ud2', 'int3', 'hlt'))

HEADER = re.compile(r'^([0-9a-f]+) <(.+)>:$')
INSN = re.compile(r'^ *([0-9a-f]+):\t(.*)$')
RELOC = re.compile(r'^\s+([0-9a-f]+): (R_\S+)\s+(\S+)')
TARGET = re.compile(r'^([0-9a-f]+)(?: <(.+)>)?$')


class Insn(NamedTuple):
    """One instruction: its address, mnemonic (without prefixes),
    operands (without objdump's `#` comment) and, on a jump or call, the
    target address and symbol objdump prints (TARGET None when indirect),
    and a relocation's symbol within it (a .o's calls and tail calls)."""
    addr: int
    mnemonic: str
    operands: str
    target: int | None = None
    symbol: str = ''
    reloc: str = ''

    def text(self) -> str:
        return ('%s %s' % (self.mnemonic, self.operands)).strip()


class Function(NamedTuple):
    """A function's instructions in address order."""
    name: str
    start: int
    insns: list[Insn]


class Path(NamedTuple):
    """The no-work path: its COUNT (None with an ERROR), its STEPS (the
    instructions, each with what the walk decided), the decisions it
    ASSUMED, and how it ENDED."""
    count: int | None
    steps: list[tuple[Insn, str]]
    assumed: list[str]
    ended: str
    error: str = ''


def _operands(text: str) -> list[str]:
    """The operands of TEXT, split at the commas outside parentheses."""
    out, depth, cur = [], 0, ''
    for ch in text:
        if ch == ',' and depth == 0:
            out.append(cur)
            cur = ''
            continue
        depth += {'(': 1, ')': -1}.get(ch, 0)
        cur += ch
    if cur:
        out.append(cur)
    return out


def _insn(addr: int, text: str) -> Insn:
    text = text.split('#', 1)[0].strip()
    words = text.split()
    while words and words[0] in PREFIXES:
        words.pop(0)
    mnemonic = words[0] if words else ''
    operands = ' '.join(words[1:])
    target, symbol = None, ''
    if mnemonic.startswith('j') or mnemonic.startswith('call'):
        m = TARGET.match(operands)
        if m:
            target, symbol = int(m.group(1), 16), m.group(2) or ''
    return Insn(addr, mnemonic, operands, target, symbol)


def parse(text: str, name: str) -> list[Function]:
    """Every function named NAME in TEXT, objdump -dr --no-show-raw-insn
    output (a relocation line belongs to the instruction above it)."""
    out: list[Function] = []
    cur: Function | None = None
    for line in text.splitlines():
        m = HEADER.match(line)
        if m:
            cur = None
            if m.group(2) == name:
                cur = Function(name, int(m.group(1), 16), [])
                out.append(cur)
            continue
        if cur is None:
            continue
        m = INSN.match(line)
        if m:
            cur.insns.append(_insn(int(m.group(1), 16), m.group(2)))
            continue
        m = RELOC.match(line)
        if m and cur.insns:
            # objdump -dr --disassemble=F prints the relocations of the
            # section before F's first instruction too: one belongs to
            # an instruction only if it is within its bytes (an x86
            # instruction is at most 15)
            last = cur.insns[-1]
            if 0 < int(m.group(1), 16) - last.addr < 15:
                cur.insns[-1] = last._replace(reloc=m.group(3))
            continue
        if not line.strip():
            cur = None
    return out


def disassemble(elf: str, name: str) -> list[Function]:
    """The functions named NAME in ELF (none when it has no such symbol)."""
    try:
        p = subprocess.run(
            ['objdump', '-dr', '--no-show-raw-insn', '--disassemble=' + name,
             elf], capture_output=True, text=True, check=False)
    except OSError as e:
        raise Fail('cannot run objdump: %s' % e) from e
    if p.returncode != 0:
        raise Fail('objdump -d %s: %s' % (elf, p.stderr.strip()))
    return parse(p.stdout, name)


def _exact(setter: Insn) -> bool:
    """Whether a zero result of SETTER is what the zero words give, with
    CF and OF clear: a test of a thing against itself or an immediate,
    cmp $0x0 (0 - 0), xor of a register with itself."""
    ops = _operands(setter.operands)
    base = re.sub('[bwlq]$', '', setter.mnemonic)
    if len(ops) != 2:
        return False
    if base == 'test':
        return ops[0] == ops[1] or ops[0].startswith('$')
    if base == 'cmp':
        return ops[0] == '$0x0'
    if base == 'xor':
        return ops[0] == ops[1] and ops[0].startswith('%')
    return False


def _destination(i: Insn) -> str:
    """Where jump I leaves for: its relocation's symbol in a .o (a
    section's with its offset: a static function of the same file, or a
    cold part), else the symbol objdump prints."""
    if i.reloc.startswith('.'):
        return i.reloc
    return re.sub(r'[-+]0x[0-9a-f]+$', '', i.reloc) or i.symbol or \
        'an address outside the function'


def _cold(destination: str) -> bool:
    """Whether DESTINATION is a cold part of a function (gcc's F.cold, in
    .text.unlikely): the function goes on there, it is no tail call."""
    return '.cold' in destination or destination.startswith('.text.unlikely')


def walk(fn: Function) -> Path:
    """FN's no-work path (the module's docstring has the rules)."""
    at = {i.addr: n for n, i in enumerate(fn.insns)}
    end = fn.insns[-1].addr if fn.insns else fn.start
    steps: list[tuple[Insn, str]] = []
    assumed: list[str] = []
    seen: set[int] = set()
    setter: Insn | None = None
    n = 0 if fn.insns else None

    def off(addr: int) -> str:
        return '+0x%x' % (addr - fn.start)

    def fail(why: str) -> Path:
        return Path(None, steps, assumed, '', why)

    def leaves(i: Insn) -> bool:
        return bool(i.reloc) or i.target is None or \
            not fn.start <= i.target <= end

    while True:
        if n is None or n >= len(fn.insns):
            return fail('runs off the end of %s' % fn.name)
        i = fn.insns[n]
        if i.addr in seen:
            return fail('loop at %s' % off(i.addr))
        seen.add(i.addr)
        m = i.mnemonic
        if m in TRAPS:
            steps.append((i, 'trap'))
            return fail('reaches %s at %s' % (m, off(i.addr)))
        if m.startswith('ret'):
            steps.append((i, 'returns'))
            return Path(len(steps), steps, assumed, 'ret')
        jcc = m in TAKEN or m in NOT_TAKEN
        if m.startswith('jmp') or jcc:
            if i.operands.startswith('*'):
                steps.append((i, 'indirect'))
                return fail('indirect jump at %s' % off(i.addr))
            taken = m.startswith('jmp') or m in TAKEN
            if jcc:
                if setter is None or not _exact(setter):
                    why = setter.text() if setter else 'no flag setter'
                    assumed.append('%s %s after %s%s: %s' % (
                        off(i.addr), m, why,
                        ' (%s)' % off(setter.addr) if setter else '',
                        'taken' if taken else 'not taken'))
            if not taken:
                steps.append((i, 'not taken'))
                n += 1
                continue
            if leaves(i):
                steps.append((i, 'leaves'))
                if _cold(_destination(i)):
                    return fail('jump to its cold part %s at %s, not '
                                'followed' % (_destination(i), off(i.addr)))
                return Path(len(steps), steps, assumed,
                            'jumps to %s' % _destination(i))
            if i.target not in at:
                steps.append((i, 'taken'))
                return fail('jump into an instruction at %s' % off(i.addr))
            steps.append((i, 'taken'))
            n = at[i.target]
            continue
        if m.startswith('j') or m.startswith('loop'):
            steps.append((i, 'undecided'))
            return fail('%s at %s is decided by no flag' % (m, off(i.addr)))
        steps.append((i, ''))
        if m.startswith('call'):
            setter = i
        elif SETS_FLAGS.match(m) or not KEEPS_FLAGS.match(m):
            setter = i
        n += 1


def measure(elf: str, name: str) -> tuple[int | None, Path | None, str]:
    """NAME's static count and no-work path in ELF, and an error (absent,
    or more than one function of that name: the path is then unknown)."""
    fns = disassemble(elf, name)
    if not fns:
        return None, None, 'missing'
    count = sum(len(f.insns) for f in fns)
    if len(fns) > 1:
        return count, None, '%d functions named %s' % (len(fns), name)
    return count, walk(fns[0]), ''
