# Lightning-AI/pytorch-lightning docs/source-pytorch/clouds/cluster_advanced.rst, step 3
from lightning.pytorch import Trainer
from my_project import YourLightningModule  # the docs leave it to the reader


def main(args):
    model = YourLightningModule(args)

    trainer = Trainer(accelerator="gpu", devices=4, num_nodes=4, strategy="ddp")

    trainer.fit(model)


if __name__ == "__main__":
    args = ...  # you can use your CLI parser of choice, or the `LightningCLI`
    # TRAIN
    main(args)
