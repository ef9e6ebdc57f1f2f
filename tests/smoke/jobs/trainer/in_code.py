"""A Hugging Face Trainer script that builds its TrainingArguments in code and reads no
command line (as many fine-tuning scripts do): 20 epochs of 16 optimizer steps per rank
pair, a checkpoint every 5 steps and the model saved at the end, all under ``out`` beside
the script. A tiny GPT-2 built from a config, synthetic data: nothing is downloaded. Each
optimizer step prints ``optimizer step N`` (rank 0), counted by the tests."""

import os
import sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments


class Ramp(torch.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        ids = (torch.arange(16) + i) % 64
        return {"input_ids": ids, "labels": ids.clone()}


class Steps(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            print(f"optimizer step {state.global_step}", flush=True)


def main():
    args = TrainingArguments(output_dir="out", num_train_epochs=20, per_device_train_batch_size=2,
                             save_steps=5, logging_steps=5, report_to="none", use_cpu=True)
    config = GPT2Config(vocab_size=64, n_positions=16, n_layer=1, n_embd=16, n_head=2,
                        bos_token_id=0, eos_token_id=0)
    trainer = Trainer(model=GPT2LMHeadModel(config), args=args, train_dataset=Ramp(),
                      callbacks=[Steps()])
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
