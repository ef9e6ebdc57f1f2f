"""A module imported by uses_helper.py: its breakpoint is planted by the import hook."""


def scale(values, factor):
    out = []
    for v in values:
        out.append(v * factor)  # BREAK
    return out
