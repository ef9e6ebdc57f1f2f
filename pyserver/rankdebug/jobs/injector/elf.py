"""Where a function of a shared object (or a Python executable) lies in a running process.

Reads the ELF file's dynamic symbol table (what ``dlsym`` sees) and the process's
``/proc/PID/maps`` for the load address. Only 64-bit little-endian ELF files are read: the
injector that uses this runs on x86-64 alone.
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Iterable
from dataclasses import dataclass

SHT_DYNSYM = 11
PT_LOAD = 1
ET_EXEC = 2
PAGE_MASK = ~0xFFF


class ElfError(Exception):
    """The file is not an ELF file this reader understands."""


@dataclass(frozen=True)
class Mapping:
    start: int
    offset: int
    path: str


def mappings(maps_text: str) -> list[Mapping]:
    """File-backed mappings of a ``/proc/PID/maps`` text, in address order."""
    out: list[Mapping] = []
    for line in maps_text.splitlines():
        parts = line.split(maxsplit=5)
        if len(parts) < 6 or not parts[5].startswith("/"):
            continue
        start = int(parts[0].split("-", 1)[0], 16)
        out.append(Mapping(start, int(parts[2], 16), parts[5].removesuffix(" (deleted)")))
    return out


def _header(data: mmap.mmap) -> tuple[int, int, int, int, int, int, int]:
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ElfError("not a 64-bit little-endian ELF file")
    e_type, = struct.unpack_from("<H", data, 16)
    e_phoff, e_shoff = struct.unpack_from("<QQ", data, 32)
    e_phentsize, e_phnum, e_shentsize, e_shnum = struct.unpack_from("<HHHH", data, 54)
    return e_type, e_phoff, e_phentsize, e_phnum, e_shoff, e_shentsize, e_shnum


def _first_load_vaddr(data: mmap.mmap, phoff: int, phentsize: int, phnum: int) -> int:
    lowest: int | None = None
    for i in range(phnum):
        p_type, = struct.unpack_from("<I", data, phoff + i * phentsize)
        if p_type == PT_LOAD:
            p_offset, p_vaddr = struct.unpack_from("<QQ", data, phoff + i * phentsize + 8)
            vaddr = (p_vaddr - p_offset) & PAGE_MASK
            lowest = vaddr if lowest is None else min(lowest, vaddr)
    if lowest is None:
        raise ElfError("no loadable segment")
    return lowest


@dataclass(frozen=True)
class Symbol:
    address: int
    size: int


def _dynsym(data: mmap.mmap, shoff: int, shentsize: int, shnum: int,
            wanted: set[str]) -> dict[str, Symbol]:
    found: dict[str, Symbol] = {}
    for i in range(shnum):
        base = shoff + i * shentsize
        sh_type, = struct.unpack_from("<I", data, base + 4)
        if sh_type != SHT_DYNSYM:
            continue
        sym_off, sym_size, sh_link = struct.unpack_from("<QQI", data, base + 24)
        str_off, = struct.unpack_from("<Q", data, shoff + sh_link * shentsize + 24)
        for at in range(sym_off, sym_off + sym_size - 23, 24):
            st_name, _info, _other, st_shndx, st_value, st_size = struct.unpack_from(
                "<IBBHQQ", data, at)
            if st_shndx == 0 or st_value == 0:
                continue  # undefined here: another object provides it
            end = data.find(b"\0", str_off + st_name)
            name = data[str_off + st_name:end].decode("ascii", "replace")
            if name in wanted:
                found[name] = Symbol(st_value, st_size)
    return found


def symbols(path: str, names: Iterable[str]) -> tuple[dict[str, Symbol], bool]:
    """The defined dynamic symbols among ``names`` (file-relative values) and whether the
    file is position-independent (its values must be moved by the load address)."""
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        try:
            e_type, phoff, phentsize, phnum, shoff, shentsize, shnum = _header(data)
            first = _first_load_vaddr(data, phoff, phentsize, phnum)
            found = _dynsym(data, shoff, shentsize, shnum, set(names))
        except struct.error as exc:
            raise ElfError(f"truncated ELF file: {exc}") from None
    pie = e_type != ET_EXEC
    if pie:
        found = {k: Symbol(v.address - first, v.size) for k, v in found.items()}
    return found, pie


def load_address(maps: list[Mapping], path: str) -> int | None:
    """Where the first page of ``path`` is mapped in the process."""
    starts = [m.start for m in maps if m.path == path and m.offset == 0]
    return min(starts) if starts else None


def resolve(maps: list[Mapping], names: Iterable[str], open_path: str = "{}",
            prefer: Iterable[str] = ()) -> dict[str, Symbol]:
    """Absolute addresses of ``names`` in the process whose mappings are ``maps``, all taken
    from one object (the first, in ``prefer`` order then address order, that defines them
    all). ``open_path`` turns a mapped path into one readable here (``/proc/PID/root{}``)."""
    wanted = list(names)
    paths = list(dict.fromkeys([*prefer, *(m.path for m in maps)]))
    for path in paths:
        base = load_address(maps, path)
        if base is None:
            continue
        try:
            found, pie = symbols(open_path.format(path), wanted)
        except (OSError, ValueError, ElfError):
            continue
        if len(found) == len(wanted):
            return {k: Symbol(base + v.address, v.size) if pie else v
                    for k, v in found.items()}
    raise ElfError("no mapped object defines " + ", ".join(wanted))
