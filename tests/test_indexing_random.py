"""Random indices against torch: any mix of integers, slices with steps, integer lists, boolean
masks, None and Ellipsis, read (`x[i]`), written (`x[i] = v`, `x[i] = 2.5`) and accumulated
(`index_put(..., accumulate=True)`), with the gradients of x and of the written value. torch
applies integers before the array indices (`x[1, :, [0]]`): reads and writes both do so."""
import random

import numpy as np
import pytest

import arraygrad as ag


def _random_index(r, shape):
    parts, i, ellipsis = [], 0, False
    for _ in range(r.randint(1, len(shape))):
        if i >= len(shape):
            break
        n, k = shape[i], r.random()
        if k < 0.25:
            parts.append(("int", r.randint(-n, n - 1)))
            i += 1
        elif k < 0.5:
            parts.append(("slice", (r.choice([None, r.randint(-n, n)]),
                                    r.choice([None, r.randint(-n, n)]), r.choice([None, 1, 2, 3]))))
            i += 1
        elif k < 0.65:
            parts.append(("list", [r.randint(-n, n - 1) for _ in range(r.randint(1, 3))]))
            i += 1
        elif k < 0.75:
            parts.append(("mask", [r.random() < 0.5 for _ in range(n)]))
            i += 1
        elif k < 0.85:
            parts.append(("none", None))
        elif not ellipsis:
            parts.append(("ellipsis", None))
            ellipsis = True
            i = len(shape) - r.randint(0, len(shape) - i)
        else:
            parts.append(("int", 0))
            i += 1
    return parts


def _index(lib, parts):
    build = {"int": lambda v: v, "slice": lambda v: slice(*v), "list": lib.tensor,
             "mask": lib.tensor, "none": lambda v: None, "ellipsis": lambda v: Ellipsis}
    return tuple(build[k](v) for k, v in parts)


def _run(lib, seed):
    r, rng = random.Random(seed), np.random.default_rng(seed)
    shape = tuple(r.randint(1, 4) for _ in range(r.randint(1, 4)))
    parts = _random_index(r, shape)
    x = lib.tensor(rng.standard_normal(shape), requires_grad=True)
    idx = _index(lib, parts)
    mode = r.choice(["get", "set", "set_number", "accumulate"])
    if mode == "get":
        y = x[idx]
        y.backward(lib.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape))))
        return [y.detach().numpy(), x.grad.numpy()]
    z, v = x * 1, None
    if mode == "accumulate":
        if not all(k in ("list", "mask") for k, _ in parts):
            return None
        v = lib.tensor(np.random.default_rng(2).standard_normal(tuple(z[idx].shape)),
                       requires_grad=True)
        z = z.index_put(idx, v, accumulate=True)
    elif mode == "set":
        shape_v = tuple(z[idx].shape)
        if shape_v and r.random() < 0.3:
            shape_v = shape_v[1:]       # broadcast over the first dim
        v = lib.tensor(np.random.default_rng(2).standard_normal(shape_v), requires_grad=True)
        z[idx] = v
    else:
        z[idx] = 2.5
    (z * lib.tensor(np.arange(z.numel()).reshape(tuple(z.shape)) + 1.0)).sum().backward()
    return [z.detach().numpy(), x.grad.numpy()] + ([] if v is None else [v.grad.numpy()])


def _selection_is_empty(lib, seed):
    r = random.Random(seed)
    shape = tuple(r.randint(1, 4) for _ in range(r.randint(1, 4)))
    return lib.zeros(shape)[_index(lib, _random_index(r, shape))].numel() == 0


def _outcome(lib, seed):
    try:
        return "ok", _run(lib, seed)
    except (IndexError, RuntimeError) as e:
        return "raises", type(e).__name__


@pytest.mark.parametrize("start", range(0, 1500, 500))
def test_random_indices_match_torch(torch, start):
    for seed in range(start, start + 500):
        (tk, tv), (ak, av) = _outcome(torch, seed), _outcome(ag, seed)
        if tk == "ok" and ak == "raises":
            # torch checks no index bounds where the selection is empty (x[:, 3:, [5]] of a
            # size-1 last dim); arraygrad checks them
            assert _selection_is_empty(torch, seed), f"seed {seed}"
            continue
        assert (ak, av if ak == "raises" else None) == (tk, tv if tk == "raises" else None), \
            f"seed {seed}: torch {tk} {tv}, arraygrad {ak} {av}"
        if tk == "ok" and tv is not None:
            assert len(av) == len(tv), seed
            for a, t in zip(av, tv):
                np.testing.assert_allclose(a, t, rtol=1e-12, atol=1e-12, err_msg=f"seed {seed}")
