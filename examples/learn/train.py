"""Step 2: train a small policy by imitation of the recorded decisions, in numpy on the CPU.

    .venv/bin/python examples/learn/train.py --data examples/learn/games.npz --out examples/learn/policy.npz

A multilayer perceptron (``--hidden 128``, one hidden layer of ReLUs; ``--hidden 0`` is a
softmax regression) scores every action of the encoding's action space; only the legal ones
compete (the others' scores are set to minus infinity before the softmax), and the loss is the
cross-entropy of the recorded action. Adam, minibatches, L2 on the weights. Whole games are held
out (``--holdout``), so the held-out accuracy is measured on positions of games never seen.
Accuracy counts the decisions where the policy's best legal action is the recorded one.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

# Small matrices: BLAS threads would only contend with each other (and with other processes):
# 5 s instead of 0.1 s for a tiny training on a busy two-core machine. Set before numpy loads.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from policy_bot import DEFAULT_PATH, Policy, save_policy  # noqa: E402

HERE = Path(__file__).resolve().parent


def load_data(paths: list[Path]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The decisions of every file, and the description they share (one game and action space)."""
    parts: list[dict[str, np.ndarray]] = []
    meta: dict[str, Any] | None = None
    for n, path in enumerate(paths):
        if not path.is_file():
            raise SystemExit(f"train.py: no data file {path}: run examples/learn/generate.py first")
        with np.load(path) as data:
            here = {
                "game_id": str(data["game_id"]),
                "players": int(data["players"]),
                "options": json.loads(str(data["options"])),
                "actions": [str(a) for a in data["actions"]],
                "sections": [tuple(part) for part in json.loads(str(data["sections"]))],
            }
            if meta is not None and here != meta:
                raise SystemExit(f"train.py: {path} holds another game or action space than {paths[0]}")
            meta = here
            # games of different files are different games even when their numbers are equal
            parts.append({"x": data["x"], "mask": data["mask"], "action": data["action"],
                          "game": data["game"] * len(paths) + n})  # fmt: skip
    assert meta is not None
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}, meta


def masked_softmax(z: np.ndarray, mask: np.ndarray) -> np.ndarray:
    z = np.where(mask > 0, z, -np.inf)
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def accuracy(policy: Policy, x: np.ndarray, mask: np.ndarray, action: np.ndarray) -> float:
    return float(np.mean(policy.choose(x, mask) == action)) if len(action) else float("nan")


def train(data: dict[str, np.ndarray], train_rows: np.ndarray, hidden: int, epochs: int, batch: int,
          lr: float, l2: float, rng: np.random.Generator, meta: dict[str, Any],
          log: bool = True) -> Policy:
    """Adam on the masked cross-entropy of the recorded actions of ``train_rows``."""
    x, mask, action = data["x"], data["mask"], data["action"]
    sizes = [x.shape[1], *([hidden] if hidden else []), mask.shape[1]]
    weights = [(rng.normal(0.0, np.sqrt(2.0 / a), (a, b)).astype(np.float32), np.zeros(b, np.float32))
               for a, b in itertools.pairwise(sizes)]  # fmt: skip
    params = [p for wb in weights for p in wb]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    beta1, beta2, eps, step = 0.9, 0.999, 1e-8, 0
    policy = Policy(weights, meta)
    for epoch in range(1, epochs + 1):
        order = rng.permutation(train_rows)
        total = 0.0
        for start in range(0, len(order), batch):
            rows = order[start:start + batch]
            xb, mb, ab = x[rows], mask[rows], action[rows]
            # forward, keeping each layer's input
            inputs, h = [], xb
            for i, (w, b) in enumerate(weights):
                inputs.append(h)
                h = h @ w + b
                if i < len(weights) - 1:
                    h = np.maximum(h, 0.0)
            p = masked_softmax(h, mb)
            total += float(-np.log(p[np.arange(len(rows)), ab] + 1e-12).sum())
            # backward: d(loss)/d(scores) = p - onehot, zero where illegal (p is 0 there)
            d = p
            d[np.arange(len(rows)), ab] -= 1.0
            d /= len(rows)
            grads: list[np.ndarray] = []
            for i in range(len(weights) - 1, -1, -1):
                w, _ = weights[i]
                grads[:0] = [inputs[i].T @ d + l2 * w, d.sum(axis=0)]
                if i:
                    d = (d @ w.T) * (inputs[i] > 0)
            step += 1
            for j, (param, g) in enumerate(zip(params, grads, strict=True)):
                m[j] = beta1 * m[j] + (1 - beta1) * g
                v[j] = beta2 * v[j] + (1 - beta2) * g * g
                m_hat = m[j] / (1 - beta1**step)
                v_hat = v[j] / (1 - beta2**step)
                param -= (lr * m_hat / (np.sqrt(v_hat) + eps)).astype(param.dtype)
        if log and (epoch == epochs or epoch % max(1, epochs // 5) == 0):
            print(f"epoch {epoch}/{epochs}: loss {total / len(order):.3f}", file=sys.stderr)
    return policy


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="Train a small policy by imitation of generate.py's decisions.")
    p.add_argument("--data", type=Path, action="append",
                   help="a .npz of generate.py (repeat for more; default: games.npz beside this script)")
    p.add_argument("--hidden", type=int, default=128,
                   help="units of the hidden layer; 0: a softmax regression (default: 128)")  # fmt: skip
    p.add_argument("--epochs", type=int, default=40, help="passes over the training decisions (default: 40)")
    p.add_argument("--batch", type=int, default=128, help="decisions per step (default: 128)")
    p.add_argument("--lr", type=float, default=5e-4, help="Adam's step size (default: 0.0005)")
    p.add_argument("--l2", type=float, default=1e-3,
                   help="L2 penalty on the weights (default: 0.001: the best held-out accuracy)")
    p.add_argument("--holdout", type=float, default=0.2,
                   help="the share of games held out to measure accuracy (default: 0.2)")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="the seed of the split, the start and the batches")
    p.add_argument("--out", type=Path, default=DEFAULT_PATH,
                   help="the weights file to write (default: policy.npz beside policy_bot.py, "
                        "which PolicyBot reads)")  # fmt: skip
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.hidden < 0 or args.epochs < 1 or args.batch < 1 or not 0 <= args.holdout < 1:
        raise SystemExit("train.py: --hidden >= 0, --epochs >= 1, --batch >= 1 and 0 <= --holdout < 1")
    data, meta = load_data(args.data or [HERE / "games.npz"])
    rng = np.random.default_rng(args.seed)
    games = np.unique(data["game"])
    held = rng.permutation(games)[: round(len(games) * args.holdout)]
    is_held = np.isin(data["game"], held)
    train_rows, held_rows = np.flatnonzero(~is_held), np.flatnonzero(is_held)
    if not len(train_rows):
        raise SystemExit("train.py: no decision left to train on: lower --holdout or generate more games")
    started = time.perf_counter()
    policy = train(data, train_rows, args.hidden, args.epochs, args.batch, args.lr, args.l2, rng, meta)
    seconds = time.perf_counter() - started
    x, mask, action = data["x"], data["mask"], data["action"]
    train_acc = accuracy(policy, x[train_rows], mask[train_rows], action[train_rows])
    held_acc = accuracy(policy, x[held_rows], mask[held_rows], action[held_rows])
    chance = float(np.mean(1.0 / mask[held_rows if len(held_rows) else train_rows].sum(axis=1)))
    print(f"{len(train_rows)} training decisions ({len(games) - len(held)} games), {len(held_rows)} held out "
          f"({len(held)} games); trained in {seconds:.1f} s")  # fmt: skip
    print(f"accuracy: train {train_acc:.3f}, held-out {held_acc:.3f} (a random legal action: {chance:.3f})")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    save_policy(args.out, policy.weights, {
        **meta, "hidden": args.hidden, "decisions": len(train_rows),
        "train_accuracy": train_acc, "holdout_accuracy": held_acc,
    })  # fmt: skip
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
