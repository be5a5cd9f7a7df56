"""examples/learn/ runs end to end on a tiny budget: generate.py records a small pimc's decisions,
train.py learns from them, and policy_bot.py plays whole legal games with the weights, as a bot
loaded the way ``atout-bot`` loads it; its README's commands are the scripts' real options."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from test_docs import bare_commands, relative_links

from atout.bot import Observation
from atout.bots import RandomBot
from atout.cli import _parser, glue_sprt
from atout.encoding import encoding_for
from atout.games import new_game
from atout.loading import BotLoadError, load_bot
from atout.local import play

ROOT = Path(__file__).resolve().parents[2]
LEARN = ROOT / "examples" / "learn"
README = LEARN / "README.md"
SCRIPTS = ("generate.py", "train.py", "policy_bot.py")


def _script(name: str) -> ModuleType:
    """One of the example's scripts as a module (its folder importable, as when it runs)."""
    if str(LEARN) not in sys.path:
        sys.path.insert(0, str(LEARN))
    spec = importlib.util.spec_from_file_location(f"learn_{name[:-3]}", LEARN / name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(*args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_generate_train_and_play(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data, weights = tmp_path / "games.npz", tmp_path / "policy.npz"
    out = _run(str(LEARN / "generate.py"), "--games", "3", "--boss", "pimc:worlds=2",
               "--opponent", "heuristic", "--out", str(data))  # fmt: skip
    assert "decisions of 3 games" in out
    enc = encoding_for("tiercon", 2)
    with np.load(data) as d:
        x, mask, action, game = d["x"], d["mask"], d["action"], d["game"]
        assert [str(a) for a in d["actions"]] == list(enc.actions)
    assert x.shape == (len(action), enc.size) and mask.shape == (len(action), len(enc.actions))
    assert len(action) > 50 and set(game.tolist()) == {0, 1, 2}
    assert (mask[np.arange(len(action)), action] == 1).all()  # the chosen action was legal
    assert (mask.sum(axis=1) >= 2).all()  # decisions without a choice are left out
    # the same games in two processes: the same rows, in the same order
    _run(str(LEARN / "generate.py"), "--games", "3", "--boss", "pimc:worlds=2", "--opponent", "heuristic",
         "--jobs", "2", "--out", str(tmp_path / "again.npz"))  # fmt: skip
    with np.load(tmp_path / "again.npz") as d:
        assert np.array_equal(d["x"], x) and np.array_equal(d["action"], action)

    out = _run(str(LEARN / "train.py"), "--data", str(data), "--hidden", "16", "--epochs", "3",
               "--out", str(weights))  # fmt: skip
    held = re.search(r"accuracy: train ([\d.]+), held-out ([\d.]+)", out)
    assert held is not None, out
    out = _run(str(LEARN / "policy_bot.py"), "--weights", str(weights))
    assert out.startswith(f"tiercon, 2 players, options {{}}: layers {enc.size} -> 16 -> {len(enc.actions)}")
    assert f"accuracy train {held[1]}, held-out {held[2]}" in out

    # loaded as atout-bot loads it, the weights named by ATOUT_POLICY
    monkeypatch.setenv("ATOUT_POLICY", str(weights))
    factory = load_bot(f"{LEARN / 'policy_bot.py'}:PolicyBot")
    for seed in range(2):
        bots = [factory(), RandomBot()] if seed % 2 == 0 else [RandomBot(), factory()]
        result = play("tiercon", bots, seed=seed)  # an illegal answer raises
        assert sorted(result.ranking) in ([1, 2], [1, 1])

    # it plays the weights' best legal action
    policy_bot = _script("policy_bot.py")
    policy = policy_bot.Policy.load(weights)
    bot = factory()
    state = new_game("tiercon", players=2).new_state(seed=5)
    checked = 0
    while not state.is_terminal and checked < 30:
        seat, legal = state.current_player, state.legal_actions()
        assert seat is not None
        raw = state.observation(seat)
        chosen = bot.act(Observation(raw, legal))
        best = policy.choose(np.asarray([enc.tensor(raw)], np.float32), np.asarray([enc.mask(legal)]))[0]
        assert chosen == (enc.action(int(best)) if len(legal) > 1 else legal[0])
        state.apply(chosen)
        checked += 1

    # and through the command line of the README
    out = _run("-m", "atout.cli", "test", f"{LEARN / 'policy_bot.py'}:PolicyBot", "random", "--game",
               "tiercon", "--players", "2", "--games", "2", env={"ATOUT_POLICY": str(weights)})  # fmt: skip
    assert "games 2" in out


def test_missing_weights_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATOUT_POLICY", str(tmp_path / "none.npz"))
    with pytest.raises(BotLoadError, match=r"no policy weights at .*none\.npz: run examples/learn/train\.py"):
        load_bot(f"{LEARN / 'policy_bot.py'}:PolicyBot")


def test_a_policy_of_another_game_refuses_the_match(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    policy_bot = _script("policy_bot.py")
    enc = encoding_for("tiercon", 2)
    path = tmp_path / "p.npz"
    weights = [(np.zeros((enc.size, len(enc.actions)), np.float32), np.zeros(len(enc.actions), np.float32))]
    meta = {"game_id": "tiercon", "players": 2, "options": {}, "actions": list(enc.actions),
            "sections": list(enc.sections)}  # fmt: skip
    policy_bot.save_policy(path, weights, meta)
    monkeypatch.setenv("ATOUT_POLICY", str(path))
    bot = load_bot(f"{LEARN / 'policy_bot.py'}:PolicyBot")
    with pytest.raises(ValueError, match="the policy plays tiercon with 2 players, not fool with 2"):
        play("fool", [bot(), RandomBot()], seed=1)


def test_a_policy_of_other_tensors_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    policy_bot = _script("policy_bot.py")
    enc = encoding_for("tiercon", 2)
    path = tmp_path / "p.npz"
    n = len(enc.actions)
    weights = [(np.zeros((enc.size - 1, n), np.float32), np.zeros(n, np.float32))]
    sections = [*enc.sections[:-1], (enc.sections[-1][0], enc.sections[-1][1] - 1)]  # an older encoding's
    meta = {"game_id": "tiercon", "players": 2, "options": {}, "actions": list(enc.actions),
            "sections": sections}  # fmt: skip
    policy_bot.save_policy(path, weights, meta)
    monkeypatch.setenv("ATOUT_POLICY", str(path))
    with pytest.raises(BotLoadError, match="trained on other tensors or actions of tiercon"):
        load_bot(f"{LEARN / 'policy_bot.py'}:PolicyBot")


def _readme_commands() -> list[list[str]]:
    text = README.read_text()
    lines = []
    for block in re.findall(r"```(?:bash|sh|shell|console|)\n(.*?)```", text, flags=re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        lines += [line.removeprefix("$ ") for line in joined.splitlines() if line.strip()]
    return [shlex.split(line) for line in lines if not line.startswith("#")]


def test_readme_commands_are_the_scripts_options() -> None:
    commands = _readme_commands()
    assert bare_commands(README.read_text()) == []
    assert [link for link in relative_links(README) if not (README.parent / link).exists()] == []
    seen = set()
    for argv in commands:
        words = list(argv)
        while words and re.match(r"[A-Z_]+=", words[0]):  # VAR=value before the command
            words.pop(0)
        if words[:2] == ["nice", "-n"]:
            words = words[3:]
        if words and words[0].endswith("atout-bot"):
            args = _parser().parse_args(glue_sprt(words[1:]))  # exits (fails) on an unknown option
            seen.add(args.command)
            continue
        scripts = [w for w in words if w.startswith("examples/learn/") and w.endswith(".py")]
        if not scripts:
            continue
        name = Path(scripts[0]).name
        assert words[0] == ".venv/bin/python", argv
        _script(name).parser().parse_args(words[words.index(scripts[0]) + 1:])
        seen.add(name)
    assert seen >= {"generate.py", "train.py", "test"}, seen
