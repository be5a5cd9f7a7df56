"""Step 3: the trained policy as a bot. It plays the legal action of the highest score.

    .venv/bin/atout-bot test examples/learn/policy_bot.py:PolicyBot random --game tiercon \
        --players 2 --sprt 0,50

The weights are the .npz that train.py writes: the file named by the environment variable
``ATOUT_POLICY``, else ``policy.npz`` beside this file (train.py's default). The file also holds
the game, its seat count and options, and the encoding's action space and tensor sections it
was trained on: a bot seated in another game or at another seat count, or an encoding whose
actions or sections have changed since, is a one-line error.

Also here: the weights file's format (:func:`save_policy`, :class:`Policy`), which train.py uses.
Run as a script (``.venv/bin/python examples/learn/policy_bot.py [--weights FILE]``) it describes
a weights file: its game, layers, and the accuracies train.py measured.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from atout import Bot
from atout.bot import MatchInfo, Observation
from atout.encoding import encoding_for

# Small matrices: BLAS threads would only contend with each other (and with other processes):
# 5 s instead of 0.1 s for a tiny training on a busy two-core machine. Set before numpy loads.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

#: The environment variable that names the weights file.
ENV = "ATOUT_POLICY"
#: The weights file when ``ATOUT_POLICY`` is not set: train.py's default ``--out``.
DEFAULT_PATH = Path(__file__).resolve().with_name("policy.npz")


class Policy:
    """A small MLP (or a softmax regression: no hidden layer) from an information-state tensor to
    one score per action of the encoding's action space."""

    def __init__(self, weights: list[tuple[np.ndarray, np.ndarray]], meta: dict[str, Any]) -> None:
        self.weights = weights
        self.meta = meta
        self.game_id: str = meta["game_id"]
        self.players: int = int(meta["players"])
        self.options: dict[str, Any] = dict(meta["options"])
        self.actions: tuple[str, ...] = tuple(meta["actions"])
        self.sections: tuple[tuple[str, int], ...] = tuple((str(n), int(k)) for n, k in meta["sections"])

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Policy:
        with np.load(path) as data:
            layers = int(data["layers"])
            weights = [(data[f"W{i}"], data[f"b{i}"]) for i in range(layers)]
            meta = {
                "game_id": str(data["game_id"]),
                "players": int(data["players"]),
                "options": json.loads(str(data["options"])),
                "actions": [str(a) for a in data["actions"]],
                "sections": [tuple(part) for part in json.loads(str(data["sections"]))],
            }
            for key in ("hidden", "decisions", "train_accuracy", "holdout_accuracy"):  # train.py's
                if key in data:
                    meta[key] = data[key].item()
        return cls(weights, meta)

    def logits(self, x: np.ndarray) -> np.ndarray:
        """Scores of every action for a batch of tensors (rows of ``x``)."""
        h = x
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(self.weights):
            h = h @ w + b
            if i < last:
                h = np.maximum(h, 0.0)
        return h

    def choose(self, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The index of the best-scored legal action of each row (``mask`` 1 where legal)."""
        z = np.where(mask > 0, self.logits(x), -np.inf)
        return np.argmax(z, axis=1)


def save_policy(path: str | os.PathLike[str], weights: list[tuple[np.ndarray, np.ndarray]],
                meta: dict[str, Any]) -> None:
    """Write ``weights`` (``(W, b)`` per layer) and ``meta`` (game_id, players, options, actions,
    sections, and anything else of numbers or text) as the .npz that :meth:`Policy.load` reads."""
    arrays: dict[str, Any] = {"layers": len(weights)}
    for i, (w, b) in enumerate(weights):
        arrays[f"W{i}"], arrays[f"b{i}"] = w.astype(np.float32), b.astype(np.float32)
    for key, value in meta.items():
        arrays[key] = json.dumps(value) if key in ("options", "sections") else value
    np.savez(path, **arrays)


_loaded: dict[Path, tuple[float, Policy]] = {}


def policy_path() -> Path:
    """The weights file: ``$ATOUT_POLICY``, else ``policy.npz`` beside this file."""
    return Path(os.environ.get(ENV) or DEFAULT_PATH)


def load_cached(path: Path) -> Policy:
    """The policy of ``path``, read once per process (again if the file changed)."""
    if not path.is_file():
        raise FileNotFoundError(
            f"no policy weights at {path}: run examples/learn/train.py, or set {ENV} to a weights file"
        )
    stamp = path.stat().st_mtime
    cached = _loaded.get(path)
    if cached is None or cached[0] != stamp:
        cached = _loaded[path] = (stamp, Policy.load(path))
    return cached[1]


class PolicyBot(Bot):
    """Plays the policy's best-scored legal action (no search, no randomness)."""

    inline = True  # a few small matrix products per decision

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        super().__init__()
        self.policy = load_cached(Path(path) if path is not None else policy_path())
        p = self.policy
        self.encoding = encoding_for(p.game_id, p.players, **p.options)
        enc = self.encoding
        if tuple(enc.actions) != p.actions or tuple(tuple(s) for s in enc.sections) != p.sections:
            raise ValueError(
                f"the policy was trained on other tensors or actions of {p.game_id} than atout.encoding's "
                "now: generate and train it again"
            )

    def on_match_start(self, match: MatchInfo) -> None:
        p = self.policy
        if match.game != p.game_id or match.players != p.players:
            raise ValueError(
                f"the policy plays {p.game_id} with {p.players} players, "
                f"not {match.game} with {match.players}"
            )

    def act(self, observation: Observation) -> str:
        legal = observation.legal_actions
        if len(legal) == 1:
            return legal[0]
        enc = self.encoding
        x = np.asarray([enc.tensor(observation.raw)], dtype=np.float32)
        scores = self.policy.logits(x)[0]
        return max(legal, key=lambda action: scores[enc.index(action)])


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description="Describe a policy's weights file (PolicyBot plays it: "
        "atout-bot test examples/learn/policy_bot.py:PolicyBot random --game tiercon --players 2)."
    )
    p.add_argument("--weights", type=Path, default=None,
                   help=f"the weights file (default: ${ENV}, else policy.npz beside this file)")
    return p


def main(argv: list[str] | None = None) -> int:
    """Describe a weights file: what it plays, its layers, what train.py measured."""
    args = parser().parse_args(argv)
    try:
        policy = load_cached(args.weights or policy_path())
    except (FileNotFoundError, KeyError, ValueError) as exc:
        raise SystemExit(f"policy_bot.py: {exc}") from None
    m = policy.meta
    sizes = [w.shape[0] for w, _ in policy.weights] + [policy.weights[-1][0].shape[1]]
    layers = " -> ".join(map(str, sizes))
    print(f"{policy.game_id}, {policy.players} players, options {policy.options}: layers {layers}")
    if "decisions" in m:
        print(f"trained on {m['decisions']} decisions: accuracy train {m['train_accuracy']:.3f}, "
              f"held-out {m['holdout_accuracy']:.3f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
