"""The README's demo (examples/train_digits.py) in a reduced form: a short run learns, matches
torch's run from the same initial weights, and its checkpoint reloads to the same score."""
import importlib.util
import pathlib

import numpy as np
import pytest

import arraygrad as ag

_PATH = pathlib.Path(__file__).resolve().parents[1] / "examples" / "train_digits.py"


@pytest.fixture(scope="module")
def demo():
    pytest.importorskip("sklearn")
    spec = importlib.util.spec_from_file_location("train_digits", _PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def small_data(demo):
    (xtr, ytr), (xte, yte) = demo.load_digits_split(seed=0)
    return (xtr[:384], ytr[:384]), (xte, yte)


def test_short_run_matches_torch_from_the_same_weights(demo, small_data, torch):
    ag.manual_seed(0)
    init = {k: v.detach().numpy().copy() for k, v in demo.build_model(ag).state_dict().items()}
    tmodel = demo.build_model(torch)
    assert list(tmodel.state_dict()) == list(init)            # same names, same layout
    # no dropout and no shuffling: the two runs see the same computation
    kw = dict(epochs=2, batch_size=64, lr=3e-3, dropout=0.0, shuffle=False, init_state=init,
              progress=False)
    _, ours, _, _ = demo.train(ag, small_data, **kw)
    _, theirs, _, _ = demo.train(torch, small_data, **kw)
    np.testing.assert_allclose(ours["loss"], theirs["loss"], rtol=2e-3)
    assert abs(ours["test_acc"][-1] - theirs["test_acc"][-1]) <= 0.01
    assert ours["test_acc"][-1] > 0.8                          # it learns in two short epochs


def test_main_trains_saves_and_reloads(demo, tmp_path, capsys):
    results = demo.main(["--epochs", "2", "--train-limit", "256", "--no-progress",
                         "--out", str(tmp_path)])
    history, seconds = results["arraygrad"]
    assert history["test_acc"][-1] > 0.5 and seconds > 0      # chance is 0.1
    out = capsys.readouterr().out
    assert "reloaded model scores" in out
    state = ag.load(tmp_path / "digits_cnn.pt")
    assert state["epochs"] == 2 and set(state["model"]) >= {"0.weight", "1.running_mean"}
    if importlib.util.find_spec("matplotlib"):
        assert (tmp_path / "train_digits.png").stat().st_size > 0
