"""A Hugging Face Trainer script in the shape of transformers' examples (run_clm.py):
argument dataclasses parsed by HfArgumentParser, TrainingArguments, Trainer.

The model is a small GPT-2 built from a config and the data is synthetic, so nothing is
downloaded and it runs on a CPU. Its full command trains for 20 epochs with evaluation and
checkpoints; `rankdebug smoke` shrinks it to a run of seconds. Run from this folder:

    accelerate launch --multi_gpu --num_processes 2 train.py --output_dir out --do_train ...
"""

from dataclasses import dataclass, field

import torch
from transformers import (
    GPT2Config,
    GPT2LMHeadModel,
    HfArgumentParser,
    Trainer,
    TrainingArguments,
)


@dataclass
class ModelArguments:
    n_layer: int = field(default=2, metadata={"help": "transformer layers"})
    n_embd: int = field(default=64, metadata={"help": "hidden size"})


@dataclass
class DataArguments:
    num_samples: int = field(default=4096, metadata={"help": "synthetic training samples"})
    block_size: int = field(default=512, metadata={"help": "tokens per sample"})
    max_train_samples: int | None = field(
        default=None, metadata={"help": "truncate the training set to this many samples"})


class Synthetic(torch.utils.data.Dataset):
    """Token sequences with a pattern a model can learn (a repeating ramp)."""

    def __init__(self, n: int, block: int) -> None:
        self.n, self.block = n, block

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        ids = (torch.arange(self.block) + i) % 256
        return {"input_ids": ids, "labels": ids.clone()}


def main() -> None:
    parser = HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    n = data_args.num_samples
    if data_args.max_train_samples is not None:
        n = min(n, data_args.max_train_samples)
    config = GPT2Config(vocab_size=256, n_positions=max(512, data_args.block_size),
                        n_layer=model_args.n_layer, n_embd=model_args.n_embd, n_head=4,
                        bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(config)
    trainer = Trainer(model=model, args=training_args,
                      train_dataset=Synthetic(n, data_args.block_size),
                      eval_dataset=Synthetic(256, data_args.block_size))
    if training_args.do_train:
        trainer.train()
        trainer.save_model()
    if training_args.do_eval:
        print(trainer.evaluate())


if __name__ == "__main__":
    main()
