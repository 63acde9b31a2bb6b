#!/usr/bin/env python3
"""Train a torchvision model the way the PyTorch ImageNet example does, reduced to what a
profiler needs: a few timed training steps, NVTX ranges per phase, and a profiled window.

Each training step i is the NVTX range "step i" holding the ranges "forward" (model + loss),
"backward" (loss.backward()) and "optimizer" (SGD step + zero_grad). cudaProfilerStart is called
before step --warmup and cudaProfilerStop after step --warmup + --profile-iters - 1, so a profiler
started with profile-from-start off (ncu --profile-from-start off, RFPROF_PROFILE_FROM_START=off)
sees exactly --profile-iters steps after warm-up. With --window-per-step each of those steps is
its own start/stop window (rfprof --replay-mode step runs one pass per window).

--flop-count prints the analytic FLOPs of one training step (forward + backward), counted by
torch.utils.flop_counter.FlopCounterMode, as one line "RFPROF_EXPECTED {json}" before training.

Only torch, torchvision and the standard library are used; torch is imported after the
arguments are parsed, so --help works where torch is not installed.
"""
import argparse
import json
import sys
import time


def build_parser():
    p = argparse.ArgumentParser(
        description="Profilable ImageNet-style training steps (torchvision models).")
    p.add_argument("data", nargs="?", default=None,
                   help="ImageNet folder with train/ (ImageFolder layout); not needed with --dummy")
    p.add_argument("-a", "--arch", default="resnet18",
                   help="torchvision model name, e.g. resnet18, resnet50, vit_b_16 (default: resnet18)")
    p.add_argument("-b", "--batch-size", type=int, default=64, help="images per step (default: 64)")
    p.add_argument("--dummy", action="store_true",
                   help="synthetic images and labels, generated once on the device")
    p.add_argument("--iters", type=int, default=20, help="training steps in total (default: 20)")
    p.add_argument("--warmup", type=int, default=5,
                   help="steps before cudaProfilerStart (default: 5)")
    p.add_argument("--profile-iters", type=int, default=2,
                   help="steps between cudaProfilerStart and cudaProfilerStop (default: 2)")
    p.add_argument("--amp", action="store_true",
                   help="automatic mixed precision (float16 autocast with a gradient scaler)")
    p.add_argument("--window-per-step", action="store_true",
                   help="one cudaProfilerStart/Stop window around each profiled step instead of one "
                        "around all of them (rfprof --replay-mode step: one pass per window)")
    p.add_argument("--stall-at-step", type=int, default=None, metavar="K",
                   help="after step K's forward pass (its kernels done), print 'stalled in step K' "
                        "and sleep --stall-s seconds: a signal sent then lands in a known step "
                        "(scripts/gpu-validate's kill runs)")
    p.add_argument("--stall-s", type=float, default=60.0,
                   help="seconds --stall-at-step sleeps (default: 60)")
    p.add_argument("--flop-count", action="store_true",
                   help="print the FLOPs of one training step as an RFPROF_EXPECTED JSON line")
    p.add_argument("--fake-data", action="store_true",
                   help="random images from torchvision's FakeData, decoded and transformed on the "
                        "CPU by --num-workers DataLoader worker processes, as real data would be")
    p.add_argument("--num-workers", type=int, default=4,
                   help="data loading workers for real data and --fake-data (default: 4)")
    p.add_argument("--lr", type=float, default=0.1, help="SGD learning rate (default: 0.1)")
    p.add_argument("--momentum", type=float, default=0.9, help="SGD momentum (default: 0.9)")
    p.add_argument("--weight-decay", type=float, default=1e-4, help="SGD weight decay (default: 1e-4)")
    p.add_argument("--image-size", type=int, default=224, help="image side in pixels (default: 224)")
    p.add_argument("--num-classes", type=int, default=1000, help="classes (default: 1000)")
    p.add_argument("--device", default="cuda", help="torch device (default: cuda)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--emit-nvtx", action="store_true",
                   help="wrap training in torch.autograd.profiler.emit_nvtx(): one NVTX range per op, "
                        "for rfanalyze's per-op forward/backward breakdown (ops.csv)")
    p.add_argument("--nvtx-layers", action="store_true",
                   help="push an NVTX range named after each leaf module around its forward "
                        "(rfanalyze's per-layer breakdown, layers.csv)")
    return p


def parse_args(argv=None):
    """Parsed and checked arguments; argparse exits with status 2 and one message on bad input."""
    p = build_parser()
    args = p.parse_args(argv)
    for name in ("batch_size", "iters", "image_size", "num_classes"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    for name in ("warmup", "profile_iters", "num_workers"):
        if getattr(args, name) < 0:
            p.error(f"--{name.replace('_', '-')} must be at least 0, got {getattr(args, name)}")
    if args.warmup + args.profile_iters > args.iters:
        p.error(f"--warmup ({args.warmup}) + --profile-iters ({args.profile_iters}) must not "
                f"exceed --iters ({args.iters})")
    if args.stall_at_step is not None and not 0 <= args.stall_at_step < args.iters:
        p.error(f"--stall-at-step must name a step from 0 to {args.iters - 1}, got {args.stall_at_step}")
    if not args.stall_s >= 0:
        p.error(f"--stall-s must be at least 0, got {args.stall_s}")
    if args.dummy and args.fake_data:
        p.error("--dummy and --fake-data exclude each other")
    if not args.dummy and not args.fake_data and args.data is None:
        p.error("give the ImageNet folder DATA, or --dummy or --fake-data for synthetic data")
    return args


def make_model(torch, torchvision, args):
    names = torchvision.models.list_models(module=torchvision.models)
    if args.arch not in names:
        raise SystemExit(f"main.py: --arch {args.arch!r}: not a torchvision classification model; "
                         f"expected one of {', '.join(names)}")
    model = torchvision.models.get_model(args.arch, weights=None, num_classes=args.num_classes)
    return model.to(args.device).train()


def batches(torch, torchvision, args):
    """Endless (images, labels) on the device: one synthetic batch, or ImageFolder batches."""
    if args.dummy:
        g = torch.Generator(device=args.device).manual_seed(args.seed)
        images = torch.randn(args.batch_size, 3, args.image_size, args.image_size,
                             device=args.device, generator=g)
        labels = torch.randint(0, args.num_classes, (args.batch_size,), device=args.device,
                               generator=g)
        while True:
            yield images, labels
    import os
    t = torchvision.transforms
    transform = t.Compose([t.RandomResizedCrop(args.image_size), t.RandomHorizontalFlip(), t.ToTensor(),
                           t.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])])
    if args.fake_data:
        dataset = torchvision.datasets.FakeData(
            size=args.batch_size * args.iters, image_size=(3, args.image_size, args.image_size),
            num_classes=args.num_classes, transform=transform, random_offset=args.seed)
    else:
        dataset = torchvision.datasets.ImageFolder(os.path.join(args.data, "train"), transform)
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                                         num_workers=args.num_workers, pin_memory=True,
                                         drop_last=True)
    while True:
        for images, labels in loader:
            yield (images.to(args.device, non_blocking=True),
                   labels.to(args.device, non_blocking=True))


def flop_count(torch, model, criterion, images, labels, args):
    """FLOPs of forward and backward of one step (FlopCounterMode: matmuls and convolutions)."""
    from torch.utils.flop_counter import FlopCounterMode
    with FlopCounterMode(display=False) as fwd:
        with torch.autocast(device_type=images.device.type, dtype=torch.float16, enabled=args.amp):
            loss = criterion(model(images), labels)
    with FlopCounterMode(display=False) as bwd:
        loss.backward()
    model.zero_grad(set_to_none=True)
    by_op = {}
    for mode in (fwd, bwd):
        for op, n in mode.get_flop_counts().get("Global", {}).items():
            by_op[str(op)] = by_op.get(str(op), 0) + int(n)
    return {"example": "imagenet", "arch": args.arch, "batch_size": args.batch_size,
            "image_size": args.image_size, "amp": args.amp,
            "counter": "torch.utils.flop_counter.FlopCounterMode",
            "flop_per_step": fwd.get_total_flops() + bwd.get_total_flops(),
            "flop_forward": fwd.get_total_flops(), "flop_backward": bwd.get_total_flops(),
            "flop_by_operator": by_op}


def add_layer_ranges(torch, model):
    """Pushes an NVTX range named after each leaf module (e.g. "layer1.0.conv1") around its
    forward; backward ops are matched to these layers by rfanalyze through emit_nvtx's sequence
    numbers."""
    for name, module in model.named_modules():
        if name and not any(True for _ in module.children()):
            module.register_forward_pre_hook(lambda m, i, n=name: torch.cuda.nvtx.range_push(n))
            module.register_forward_hook(lambda m, i, o: torch.cuda.nvtx.range_pop())


def train(args):
    try:
        import torch
        import torchvision
    except ImportError as e:
        raise SystemExit(f"main.py: PyTorch and torchvision are needed to train: {e}")

    torch.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = False  # same kernels in every run: comparable profiles
    cuda = args.device.startswith("cuda")
    if cuda and not torch.cuda.is_available():
        raise SystemExit("main.py: CUDA is not available; use a GPU machine or --device cpu")
    model = make_model(torch, torchvision, args)
    if args.nvtx_layers and cuda:
        add_layer_ranges(torch, model)
    criterion = torch.nn.CrossEntropyLoss().to(args.device)
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=args.momentum,
                                weight_decay=args.weight_decay)
    scaler = torch.amp.GradScaler(args.device.split(":")[0], enabled=args.amp)
    data = batches(torch, torchvision, args)
    nvtx = torch.cuda.nvtx if cuda else None

    def sync():
        if cuda:
            torch.cuda.synchronize()

    def push(name):
        if nvtx:
            nvtx.range_push(name)

    def pop():
        if nvtx:
            nvtx.range_pop()

    if args.flop_count:
        images, labels = next(data)
        print("RFPROF_EXPECTED " + json.dumps(flop_count(torch, model, criterion, images, labels,
                                                         args)), flush=True)

    print(f"main.py: {args.arch}, batch {args.batch_size}, {args.iters} steps, profiled steps "
          f"{args.warmup}..{args.warmup + args.profile_iters - 1}, amp {args.amp}", flush=True)
    profiled = []
    for i in range(args.iters):
        images, labels = next(data)
        in_window = args.warmup <= i < args.warmup + args.profile_iters
        # A step's time includes the cudaProfilerStart/Stop it makes, where a profiler does its
        # window work (rfprof's replay across steps ends a pass there, kernel replay decodes), so
        # that a profiled step's time is all the profiler costs it (bench/overhead.py, steps.csv).
        sync()
        t0 = time.perf_counter()
        if cuda and in_window and (i == args.warmup or args.window_per_step):
            torch.cuda.profiler.start()
        push(f"step {i}")
        push("forward")
        with torch.autocast(device_type=args.device.split(":")[0], dtype=torch.float16,
                            enabled=args.amp):
            loss = criterion(model(images), labels)
        pop()
        if i == args.stall_at_step:
            sync()
            print(f"stalled in step {i}", flush=True)
            time.sleep(args.stall_s)
        push("backward")
        scaler.scale(loss).backward()
        pop()
        push("optimizer")
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        pop()
        pop()
        sync()
        if cuda and in_window and (i == args.warmup + args.profile_iters - 1 or args.window_per_step):
            torch.cuda.profiler.stop()
        ms = (time.perf_counter() - t0) * 1e3
        if in_window:
            profiled.append(ms)
        print(f"step {i}: {ms:.2f} ms, loss {loss.item():.4f}{' (profiled)' if in_window else ''}",
              flush=True)
    if profiled:
        print(f"profiled steps: mean {sum(profiled) / len(profiled):.2f} ms", flush=True)


def main(argv=None):
    args = parse_args(argv)
    if args.emit_nvtx:
        import torch
        with torch.autograd.profiler.emit_nvtx():
            train(args)
    else:
        train(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
