"""Starting a debugger in a Python process that did not plan for one: ptrace injection
(inject: the call into the target's interpreter; elf: finding its symbols; ptrace: why
ptrace is refused, and the fix) and, on Python 3.14, the interpreter's own remote exec
(remote_exec, PEP 768)."""
