"""Train a small CNN on scikit-learn's handwritten digits with arraygrad, the PyTorch way.

    pip install -e '.[demo]' && python examples/train_digits.py

The 1,797 8x8 digit images ship inside scikit-learn (no download). The model
(Conv2d, BatchNorm2d, ReLU, MaxPool2d, Dropout, Linear) uses `MyReLU`, the
custom `autograd.Function` of the specification's first seed, as one of its
activations. Training uses a DataLoader with a seeded Generator, Adam, a
cosine learning-rate schedule and a tqdm progress bar; the loss and accuracy
curves are saved as a PNG, and a checkpoint written with `arraygrad.save` is
reloaded into a fresh model to check it scores the same.

The program is written against the torch API: `--library torch` runs the very
same code under PyTorch, and `--compare` trains both from the same initial
weights and prints their accuracies side by side.
"""
import argparse
import importlib
import os
import time

import numpy as np


def load_digits_split(seed=0, test_fraction=0.2):
    """Images scaled to [0, 1] then standardised with the training set's mean and std; a fixed
    stratified-by-chance split (NumPy's generator, so both libraries see the same data)."""
    from sklearn.datasets import load_digits
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]          # (n, 1, 8, 8)
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(y))
    n_test = int(round(test_fraction * len(y)))
    test, train = order[:n_test], order[n_test:]
    mean, std = x[train].mean(), x[train].std()
    x = (x - mean) / std
    return (x[train], y[train]), (x[test], y[test])


def build_model(torch, dropout=0.25):
    """The CNN, built from the library passed in (arraygrad or torch)."""
    nn = torch.nn

    class MyReLU(torch.autograd.Function):
        """The specification's first seed: ReLU with a hand-written backward."""

        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return input.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * (input > 0).to(grad_output.dtype)

    class SeedReLU(nn.Module):
        def forward(self, x):
            return MyReLU.apply(x)

    return nn.Sequential(
        nn.Conv2d(1, 16, kernel_size=3, padding=1), nn.BatchNorm2d(16), SeedReLU(),
        nn.Conv2d(16, 32, kernel_size=3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.MaxPool2d(2),                                              # 32 x 4 x 4
        nn.Dropout(dropout), nn.Flatten(),
        nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Dropout(dropout),
        nn.Linear(64, 10))


def evaluate(torch, model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
            total += len(y)
    return correct / total


def train(torch, data, *, epochs=15, batch_size=64, lr=3e-3, seed=0, dropout=0.25,
          init_state=None, shuffle=True, progress=True, log=print):
    """Train under `torch` (arraygrad or torch); returns (model, history, seconds per epoch)."""
    DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset
    (xtr, ytr), (xte, yte) = data
    torch.manual_seed(seed)
    model = build_model(torch, dropout)
    if init_state is not None:
        model.load_state_dict({k: torch.tensor(v) for k, v in init_state.items()})
    train_loader = DataLoader(TensorDataset(torch.tensor(xtr), torch.tensor(ytr)),
                              batch_size=batch_size, shuffle=shuffle,
                              generator=torch.Generator().manual_seed(seed))
    test_loader = DataLoader(TensorDataset(torch.tensor(xte), torch.tensor(yte)), batch_size=256)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs * len(train_loader))
    loss_fn = torch.nn.CrossEntropyLoss()
    history = {"loss": [], "test_acc": []}
    bar = _progress(range(epochs), progress, torch.__name__)
    start = time.perf_counter()
    for epoch in bar:
        model.train()
        total, n = 0.0, 0
        for x, y in train_loader:
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(y)
            n += len(y)
        history["loss"].append(total / n)
        history["test_acc"].append(evaluate(torch, model, test_loader))
        msg = f"loss {history['loss'][-1]:.4f}  test acc {history['test_acc'][-1]:.2%}"
        if hasattr(bar, "set_postfix_str"):
            bar.set_postfix_str(msg)
        else:
            log(f"[{torch.__name__}] epoch {epoch + 1}/{epochs}: {msg}")
    seconds = (time.perf_counter() - start) / max(epochs, 1)
    return model, history, seconds, test_loader


def _progress(iterable, enabled, name):
    if not enabled:
        return iterable
    try:
        from tqdm import tqdm
    except ImportError:
        return iterable
    return tqdm(iterable, desc=f"{name} epochs", unit="epoch")


def save_plot(histories, path):
    """Loss and test accuracy per epoch (one line per library)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install -e '.[demo]')")
        return None
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
    for name, h in histories.items():
        epochs = range(1, len(h["loss"]) + 1)
        ax1.plot(epochs, h["loss"], marker="o", label=name)
        ax2.plot(epochs, [100 * a for a in h["test_acc"]], marker="o", label=name)
    ax1.set(xlabel="epoch", ylabel="training loss", yscale="log", title="loss")
    ax2.set(xlabel="epoch", ylabel="test accuracy (%)", title="accuracy")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--library", default="arraygrad", choices=["arraygrad", "torch"])
    p.add_argument("--compare", action="store_true",
                   help="also train under PyTorch from the same initial weights")
    p.add_argument("--epochs", type=int, default=15)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--train-limit", type=int, default=None,
                   help="train on the first N training images only (a quick check)")
    p.add_argument("--out", default="train_digits_out", help="folder for the plot and checkpoint")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)

    torch = importlib.import_module(args.library)
    data = load_digits_split(args.seed)
    if args.train_limit:
        data = ((data[0][0][:args.train_limit], data[0][1][:args.train_limit]), data[1])
    print(f"digits: {len(data[0][1])} training and {len(data[1][1])} test images")
    os.makedirs(args.out, exist_ok=True)

    # the initial weights, kept as NumPy arrays so that --compare starts torch from them
    torch.manual_seed(args.seed)
    init_state = {k: v.detach().numpy().copy() for k, v in build_model(torch).state_dict().items()}
    kw = dict(epochs=args.epochs, batch_size=args.batch_size, lr=args.lr, seed=args.seed,
              init_state=init_state, progress=not args.no_progress)
    model, history, secs, test_loader = train(torch, data, **kw)
    results = {args.library: (history, secs)}
    acc = history["test_acc"][-1]
    print(f"{args.library}: test accuracy {acc:.2%} after {args.epochs} epochs, "
          f"{secs:.2f} s per epoch")

    # checkpoint: save, reload into a fresh model, check it scores the same
    ckpt = os.path.join(args.out, "digits_cnn.pt")
    torch.save({"model": model.state_dict(), "epochs": args.epochs, "test_acc": acc}, ckpt)
    state = torch.load(ckpt, weights_only=True)
    fresh = build_model(torch)
    fresh.load_state_dict(state["model"])
    reloaded = evaluate(torch, fresh, test_loader)
    print(f"checkpoint {ckpt}: reloaded model scores {reloaded:.2%}")
    if reloaded != acc:
        raise SystemExit(f"the reloaded checkpoint scores {reloaded:.2%}, not {acc:.2%}")

    if args.compare:
        other = "torch" if args.library == "arraygrad" else "arraygrad"
        _, h2, secs2, _ = train(importlib.import_module(other), data, **kw)
        results[other] = (h2, secs2)
        print(f"{other}: test accuracy {h2['test_acc'][-1]:.2%}, {secs2:.2f} s per epoch "
              f"(same initial weights; dropout masks and shuffles differ)")
    plot = save_plot({name: h for name, (h, _) in results.items()},
                     os.path.join(args.out, "train_digits.png"))
    if plot:
        print(f"plot: {plot}")
    return results


if __name__ == "__main__":
    main()
