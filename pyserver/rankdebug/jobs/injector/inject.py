"""Run Python code inside another process on x86-64 Linux: ptrace calls its own C API.

gdb's inferior calls (what debugpy's ``--pid`` uses) fail on current Intel CPUs with a recent
kernel: gdb 13 writes the x86 extended register state with a buffer too small for the AMX
tile registers, the kernel refuses (``Couldn't write extended state status: Bad address``)
and gdb leaves the interrupted system call unrestartable, so the target's ``time.sleep`` or
collective dies with ``OSError: [Errno 514]``. This module makes the same three calls gdb
would (``PyGILState_Ensure``, ``PyRun_SimpleString``, ``PyGILState_Release``) with plain
ptrace and no gdb at all:

- only the main thread is stopped (``PTRACE_SEIZE`` + ``PTRACE_INTERRUPT``, no SIGSTOP
  queued); the process's other threads run on, so one of them holding the GIL lets it go;
- every register is saved first, the extended (vector) state with the kernel's own size,
  and put back after, so a thread stopped in the middle of its own computation resumes it
  untouched, and a thread stopped in a system call restarts it the way the kernel does
  after any stop;
- each call returns to address 0; the fault that follows is the sign that it returned, and
  is never delivered. Other signals that arrive meanwhile are passed on.

The code string is written below the thread's stack pointer (past the red zone), so
nothing the thread uses is overwritten.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import signal
import sys
import time
from collections.abc import Callable

from rankdebug.jobs import procfs
from rankdebug.jobs.injector import elf

PTRACE_CONT = 7
PTRACE_GETREGS = 12
PTRACE_SETREGS = 13
PTRACE_DETACH = 17
PTRACE_GETREGSET = 0x4204
PTRACE_SETREGSET = 0x4205
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
PTRACE_EVENT_STOP = 128
NT_X86_XSTATE = 0x202
SYS_FUTEX = 202
# System calls a thread waits in without holding a lock of its own (x86-64 numbers): read,
# write, poll, select, pause, nanosleep, connect, accept, sendto, recvfrom, sendmsg,
# recvmsg, wait4, rt_sigtimedwait, rt_sigsuspend, futex, clock_nanosleep, epoll_wait,
# waitid, pselect6, ppoll, epoll_pwait, accept4, recvmmsg, epoll_pwait2. Not mmap, brk and
# the like: malloc makes those holding its arena's lock.
BLOCKING_SYSCALLS = frozenset({0, 1, 7, 23, 34, 35, 42, 43, 44, 45, 46, 47, 61, 128, 130,
                               202, 230, 232, 247, 270, 271, 281, 288, 299, 441})
FUTEX_WAKE, FUTEX_CMD_MASK = 1, 0x7F
PROT_RW, MAP_PRIVATE_ANON = 3, 0x22
SAFE_POINT_TRIES = 40
WALL = 0x40000000
RED_ZONE = 128
XSTATE_MAX = 1 << 16
FLAG_TF_DF = 0x100 | 0x400  # trap and direction flags: clear for a C call

PYTHON_API = ("Py_IsInitialized", "PyGILState_Ensure", "PyGILState_Release",
              "PyRun_SimpleString", "Py_AddPendingCall", "_PyRuntime")


class InjectError(Exception):
    """The code could not be run in the process; the message says why."""


class Regs(ctypes.Structure):
    """``struct user_regs_struct`` of x86-64 Linux."""

    _fields_ = [(name, ctypes.c_ulonglong) for name in (
        "r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx",
        "rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss", "fs_base",
        "gs_base", "ds", "es", "fs", "gs")]


class IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def supported() -> bool:
    return sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")


_libc = ctypes.CDLL(None, use_errno=True)
_libc.ptrace.restype = ctypes.c_long
_libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]


def _ptrace(request: int, pid: int, addr: int | None = None,
            data: int | ctypes._Pointer[ctypes.Structure] | None = None) -> int:
    ctypes.set_errno(0)
    result: int = _libc.ptrace(request, pid, addr, data)
    err = ctypes.get_errno()
    if result == -1 and err:
        raise OSError(err, f"ptrace({request:#x}) on {pid}: {os.strerror(err)}")
    return result


class Tracee:
    """The main thread of ``pid``, stopped under ptrace for as long as this lives."""

    def __init__(self, pid: int, deadline: float) -> None:
        self.pid = pid
        self.deadline = deadline
        self.regs = Regs()
        self.xstate: ctypes.Array[ctypes.c_char] | None = None
        _ptrace(PTRACE_SEIZE, pid)
        try:
            self._stop()
        except BaseException:
            self._detach()
            raise

    def _stop(self) -> None:
        _ptrace(PTRACE_INTERRUPT, self.pid)
        self._wait_stop(lambda sig, event: event == PTRACE_EVENT_STOP)
        _ptrace(PTRACE_GETREGS, self.pid, None, ctypes.pointer(self.regs))
        self.xstate = self._get_xstate()

    def at_safe_point(self, runtime: elf.Symbol) -> bool:
        """Stopped in a blocking system call (``BLOCKING_SYSCALLS``), and not on one of the
        interpreter's own locks or condition variables (``runtime``, where the GIL lives): a
        call into Python from there takes the GIL without waiting on the thread itself. In
        user code the thread may hold the GIL's mutex, or malloc's; a nested wait on the very
        condition variable it waits on deadlocks glibc's condition variable."""
        nr = self.regs.orig_rax
        if nr not in BLOCKING_SYSCALLS:
            return False
        if nr != SYS_FUTEX:
            return True
        inside = runtime.address <= self.regs.rdi < runtime.address + runtime.size
        return not inside and self.regs.rsi & FUTEX_CMD_MASK != FUTEX_WAKE

    def stop_again(self, pause: float) -> None:
        """Let the thread run for ``pause`` seconds, then stop it where it then is."""
        _ptrace(PTRACE_CONT, self.pid, None, 0)
        time.sleep(pause)
        self._stop()

    def _get_xstate(self) -> ctypes.Array[ctypes.c_char] | None:
        buf = ctypes.create_string_buffer(XSTATE_MAX)
        iov = IoVec(ctypes.cast(buf, ctypes.c_void_p), XSTATE_MAX)
        try:
            _ptrace(PTRACE_GETREGSET, self.pid, NT_X86_XSTATE, ctypes.pointer(iov))
        except OSError:
            return None
        # The kernel accepts back exactly the size it gave.
        return ctypes.create_string_buffer(buf.raw[:iov.len], iov.len)

    def _wait_stop(self, wanted: Callable[[int, int], bool]) -> int:
        """Wait for a stop that ``wanted(signal, event)`` accepts; pass other signals on.
        Returns the signal of the accepted stop."""
        while True:
            status = self._waitpid()
            if os.WIFEXITED(status) or os.WIFSIGNALED(status):
                raise InjectError(f"process {self.pid} ended while attaching")
            sig = os.WSTOPSIG(status)
            event = status >> 16
            if wanted(sig, event):
                return sig
            # Not ours: a group stop is let go, a real signal reaches the process.
            passed = 0 if event or sig in (signal.SIGSTOP, signal.SIGTRAP) else sig
            _ptrace(PTRACE_CONT, self.pid, None, passed)

    def _waitpid(self) -> int:
        pause = 0.0005
        while True:
            done, status = os.waitpid(self.pid, os.WNOHANG | WALL)
            if done:
                return status
            if time.monotonic() > self.deadline:
                raise TimeoutError
            time.sleep(pause)
            pause = min(pause * 2, 0.02)

    def write(self, addr: int, data: bytes) -> None:
        fd = os.open(f"/proc/{self.pid}/mem", os.O_RDWR)
        try:
            if os.pwrite(fd, data, addr) != len(data):
                raise InjectError(f"could not write to process {self.pid}'s memory")
        finally:
            os.close(fd)

    def call(self, func: int, *args: int, stack: int) -> int:
        """Call ``func(*args)`` (integers or pointers, at most 6) on the stopped thread with
        its stack pointer at ``stack``; return its result."""
        regs = Regs.from_buffer_copy(self.regs)
        if len(args) > 6:
            raise ValueError("at most 6 arguments go in registers")
        for name, value in zip(("rdi", "rsi", "rdx", "rcx", "r8", "r9")[:len(args)], args,
                               strict=True):
            setattr(regs, name, value)
        sp = (stack & ~0xF) - 8  # 16-byte aligned before the call pushed its return address
        self.write(sp, (0).to_bytes(8, "little"))  # return to 0: the fault says "returned"
        regs.rsp, regs.rip, regs.rax = sp, func, 0
        regs.orig_rax = 2**64 - 1  # not in a system call: nothing is restarted on resume
        regs.eflags &= ~FLAG_TF_DF
        _ptrace(PTRACE_SETREGS, self.pid, None, ctypes.pointer(regs))
        _ptrace(PTRACE_CONT, self.pid, None, 0)
        self._wait_stop(self._returned)
        out = Regs()
        _ptrace(PTRACE_GETREGS, self.pid, None, ctypes.pointer(out))
        return int(out.rax)

    def _returned(self, sig: int, event: int) -> bool:
        if event or sig != signal.SIGSEGV:
            return False
        now = Regs()
        _ptrace(PTRACE_GETREGS, self.pid, None, ctypes.pointer(now))
        if now.rip != 0:
            raise InjectError(f"the call into process {self.pid} crashed (SIGSEGV at "
                              f"{now.rip:#x}); its state was restored")
        return True

    def abandon(self) -> None:
        """Stop the thread inside a call that takes too long, so that ``restore`` can put
        it back where it was (better than a thread that returns to address 0)."""
        self.deadline = time.monotonic() + 5.0
        _ptrace(PTRACE_INTERRUPT, self.pid)
        self._wait_stop(lambda sig, event: event == PTRACE_EVENT_STOP)

    def restore(self) -> None:
        """Put every register back and let the thread go on as if nothing happened."""
        if procfs.status(self.pid) is None:
            return
        try:
            if self.xstate is not None:
                iov = IoVec(ctypes.cast(self.xstate, ctypes.c_void_p), len(self.xstate))
                _ptrace(PTRACE_SETREGSET, self.pid, NT_X86_XSTATE, ctypes.pointer(iov))
            _ptrace(PTRACE_SETREGS, self.pid, None, ctypes.pointer(self.regs))
        finally:
            self._detach()

    def _detach(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            _ptrace(PTRACE_DETACH, self.pid, None, 0)


def _maps(pid: int) -> tuple[list[elf.Mapping], str]:
    try:
        with open(f"/proc/{pid}/maps") as f:
            maps = elf.mappings(f.read())
        exe = os.readlink(f"/proc/{pid}/exe").removesuffix(" (deleted)")
    except OSError as exc:
        raise InjectError(f"cannot read process {pid}'s memory map: {exc.strerror}") from None
    return maps, exe


def functions(pid: int) -> dict[str, elf.Symbol]:
    """Where the C functions to call lie in ``pid``: its interpreter's C API and libc's
    ``mmap``; and its interpreter's runtime state (``_PyRuntime``, the GIL's home)."""
    maps, exe = _maps(pid)
    root = f"/proc/{pid}/root{{}}"
    try:
        found = elf.resolve(maps, PYTHON_API, root, prefer=[exe])
    except elf.ElfError:
        raise InjectError(f"process {pid} has no Python C API in its memory (is it a "
                          "Python interpreter?)") from None
    libc = [m.path for m in maps if os.path.basename(m.path).startswith("libc.so")]
    try:
        found.update(elf.resolve(maps, ["mmap"], root, prefer=libc))
    except elf.ElfError:
        raise InjectError(f"process {pid} has no C library mmap in its memory") from None
    return found


def run_python(pid: int, code: str, timeout: float) -> int | None:
    """Run ``code`` in ``pid``'s main thread, holding the GIL.

    The thread is stopped where it holds no lock: in a blocking system call (a sleep, a
    wait on a socket, a lock or a collective). There the code runs at once, and the result
    of ``PyRun_SimpleString`` is returned (0: ran, -1: raised; the traceback went to the
    process's stderr). A thread that runs Python code without pause is never caught in a
    system call: the code is then handed to ``Py_AddPendingCall``, which the interpreter
    runs between two bytecodes, and None is returned (the caller sees its effect)."""
    api = functions(pid)
    text = code.encode("utf-8") + b"\0"
    deadline = time.monotonic() + timeout
    try:
        tracee = Tracee(pid, deadline)
    except TimeoutError:
        raise InjectError(f"process {pid}'s main thread did not stop within "
                          f"{timeout:.0f} s") from None
    try:
        for attempt in range(SAFE_POINT_TRIES):
            if tracee.at_safe_point(api["_PyRuntime"]):
                return _run_now(tracee, api, text)
            tracee.stop_again(0.002 + 0.001 * attempt)
        _schedule(tracee, api, _never_raises(code))
        return None
    except TimeoutError:
        tracee.abandon()
        raise InjectError(f"process {pid} did not finish the injected call within "
                          f"{timeout:.0f} s; it was abandoned") from None
    finally:
        tracee.restore()


def _never_raises(code: str) -> bytes:
    """``code`` wrapped for a pending call, where an exception would surface as a
    SystemError in whatever the thread was running; it runs in ``__main__`` as
    ``PyRun_SimpleString`` would."""
    wrapped = (f"try:\n    exec({code!r}, __import__('__main__').__dict__)\n"
               "except BaseException:\n    __import__('traceback').print_exc()\n")
    return wrapped.encode("utf-8") + b"\0"


def _scratch(tracee: Tracee, text: bytes) -> tuple[int, int]:
    """Where ``text`` goes (below the red zone) and the stack for the calls below it."""
    text_at = (tracee.regs.rsp - RED_ZONE - len(text)) & ~0xF
    tracee.write(text_at, text)
    return text_at, text_at - 64


def _run_now(tracee: Tracee, api: dict[str, elf.Symbol], text: bytes) -> int:
    text_at, stack = _scratch(tracee, text)
    if not tracee.call(api["Py_IsInitialized"].address, stack=stack) & 0xFFFFFFFF:
        raise InjectError(f"process {tracee.pid}'s Python interpreter is not running yet")
    gil = tracee.call(api["PyGILState_Ensure"].address, stack=stack) & 0xFFFFFFFF
    result = tracee.call(api["PyRun_SimpleString"].address, text_at, stack=stack) & 0xFFFFFFFF
    tracee.call(api["PyGILState_Release"].address, gil, stack=stack)
    return result - 2**32 if result >= 2**31 else result


def _schedule(tracee: Tracee, api: dict[str, elf.Symbol], text: bytes) -> None:
    """Queue ``PyRun_SimpleString(text)`` as a pending call; the text lives in pages of its
    own (mapped by a call to ``mmap``, which takes no lock), as the stack will move on."""
    _, stack = _scratch(tracee, b"")
    size = (len(text) + 0xFFF) & ~0xFFF
    page = tracee.call(api["mmap"].address, 0, size, PROT_RW, MAP_PRIVATE_ANON, 2**64 - 1, 0,
                       stack=stack)
    if page >= 2**64 - 4096:
        raise InjectError(f"could not map memory in process {tracee.pid}")
    tracee.write(page, text)
    if tracee.call(api["Py_AddPendingCall"].address, api["PyRun_SimpleString"].address, page,
                   stack=stack) & 0xFFFFFFFF:
        raise InjectError(f"process {tracee.pid}'s interpreter refused a pending call")
