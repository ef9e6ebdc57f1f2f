# A character-level run (the shape of nanoGPT's config/train_shakespeare_char.py).
out_dir = "out-char"
eval_interval = 250
eval_iters = 20
log_interval = 10
always_save_checkpoint = False
gradient_accumulation_steps = 2
batch_size = 64
block_size = 256
max_iters = 5000
