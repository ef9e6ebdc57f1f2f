print("pretrain")
