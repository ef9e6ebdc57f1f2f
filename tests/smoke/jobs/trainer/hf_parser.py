"""A Hugging Face Trainer script in the shape of transformers' examples: HfArgumentParser
parses its data arguments and TrainingArguments from the command line. A tiny GPT-2 built
from a config, synthetic data: nothing is downloaded. Each optimizer step prints
``optimizer step N`` (rank 0), counted by the tests."""

import os
import sys
from dataclasses import dataclass, field

import torch
from transformers import (
    GPT2Config,
    GPT2LMHeadModel,
    HfArgumentParser,
    Trainer,
    TrainerCallback,
    TrainingArguments,
)


@dataclass
class DataArguments:
    block_size: int = field(default=64, metadata={"help": "tokens per sample"})
    max_train_samples: int | None = field(default=None, metadata={"help": "at most this many"})


class Ramp(torch.utils.data.Dataset):
    def __init__(self, n, block):
        self.n, self.block = n, block

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        ids = (torch.arange(self.block) + i) % 64
        return {"input_ids": ids, "labels": ids.clone()}


class Steps(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            print(f"optimizer step {state.global_step}", flush=True)


def main():
    data_args, training_args = HfArgumentParser(
        (DataArguments, TrainingArguments)).parse_args_into_dataclasses()
    n = min(256, data_args.max_train_samples or 256)
    config = GPT2Config(vocab_size=64, n_positions=64, n_layer=1, n_embd=16, n_head=2,
                        bos_token_id=0, eos_token_id=0)
    trainer = Trainer(model=GPT2LMHeadModel(config), args=training_args,
                      train_dataset=Ramp(n, data_args.block_size), callbacks=[Steps()])
    trainer.train()
    trainer.save_model()
    if torch.distributed.is_initialized():
        # torch's gloo teardown at interpreter exit aborts a rank now and then under load
        # ("terminate called without an active exception", pytorch/pytorch#190489, even
        # after destroy_process_group): the tests count steps and outputs, not that, so
        # every rank leaves once all are done.
        torch.distributed.barrier()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
