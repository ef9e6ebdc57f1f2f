"""Rank Debugger: debug chosen ranks of distributed PyTorch training."""

__version__ = "0.1.0"
