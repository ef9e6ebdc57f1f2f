"""The model of raise_train.py: a language-model shape, an embedding under two blocks of the
user's own (two ``forward`` methods of the user's, one of torch's ``Embedding``)."""

import torch


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(10, 4)

    def forward(self, tokens):
        width = tokens.numel()  # noqa: F841 (read by `rankdebug eval` in this frame)
        return self.emb(tokens)  # RAISES


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = Block()
        self.head = torch.nn.Linear(4, 1)

    def forward(self, tokens):
        depth = 2  # noqa: F841 (read by `rankdebug eval` in this frame)
        hidden = self.block(tokens)  # CALLS BLOCK
        return self.head(hidden).sum()
