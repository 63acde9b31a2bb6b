"""Two processes that both use CUDA: this one and a child started with multiprocessing's 'spawn'
(as PyTorch DataLoader workers and torchrun/mpirun ranks are). Each multiplies two square matrices
N times. Under `rfprof --target-processes all -o run_%p` each process writes its own trace; under
`--target-processes application-only` only this one does.

    python3 examples/multiprocess/two_processes.py [--size 1024] [--iters 3]
Prints "RFPROF_PIDS parent=<pid> child=<pid>" so that a check can name the expected traces.
"""
import argparse
import multiprocessing as mp
import os

import torch


def work(size: int, iters: int) -> float:
    a = torch.ones(size, size, device="cuda")
    b = torch.ones(size, size, device="cuda")
    for _ in range(iters):
        c = a @ b
    torch.cuda.synchronize()
    return float(c[0, 0])


def child(size: int, iters: int, q) -> None:
    q.put((os.getpid(), work(size, iters)))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=1024)
    p.add_argument("--iters", type=int, default=3)
    args = p.parse_args()
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    proc = ctx.Process(target=child, args=(args.size, args.iters, q))
    proc.start()
    parent_value = work(args.size, args.iters)
    child_pid, child_value = q.get()
    proc.join()
    assert proc.exitcode == 0 and parent_value == child_value == args.size
    print(f"RFPROF_PIDS parent={os.getpid()} child={child_pid}", flush=True)


if __name__ == "__main__":
    main()
