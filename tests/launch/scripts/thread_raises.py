"""A worker thread raises (uncaught); the main thread waits for it, then ends."""

import threading


def work(batch):
    scale = 0  # read by the test's debugger
    return batch / scale  # RAISES


worker = threading.Thread(target=work, args=(4,), name="loader")
worker.start()
worker.join()
print("main thread done")
