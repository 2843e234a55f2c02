"""Errors of the core (issue 2) against torch: same exception type, torch's wording.

Each case runs in both libraries; `says` must appear in both messages, so the
table is checked against torch itself.
"""
import pytest

import arraygrad as ag

from conftest import reference_torch

torch = reference_torch()


def _leaf(lib, *shape):
    return lib.ones(*shape, requires_grad=True)


CASES = [
    # autograd
    ("backward non-scalar", lambda m: (_leaf(m, 2) * 2).backward(),
     "grad can be implicitly created only for scalar outputs"),
    ("grad non-scalar", lambda m: _grad_of(m, lambda x: x * 2),
     "grad can be implicitly created only for scalar outputs"),
    ("grad without inputs", lambda m: m.autograd.grad(_leaf(m, 1).sum(), []),
     "`inputs` argument to `grad()` cannot be empty."),
    ("backward without grad", lambda m: m.ones(2).sum().backward(),
     "element 0 of tensors does not require grad and does not have a grad_fn"),
    ("second backward", lambda m: _twice(m),
     "Trying to backward through the graph a second time"),
    ("gradient shape", lambda m: (_leaf(m, 2) * 2).backward(m.ones(3)),
     "Mismatch in shape: grad_output[0] has a shape of"),
    ("unused input", lambda m: _unused(m),
     "The differentiated Tensor at index 1 appears to not have been used in the graph. Set "
     "allow_unused=True if this is the desired behavior."),
    ("input without grad", lambda m: m.autograd.grad((_leaf(m, 1) * 2).sum(), m.ones(1)),
     "One of the differentiated Tensors does not require grad"),
    ("requires_grad on int", lambda m: m.tensor([1, 2]).requires_grad_(),
     "only Tensors of floating point"),
    ("requires_grad off non-leaf", lambda m: (_leaf(m, 1) * 2).requires_grad_(False),
     "you can only change requires_grad flags of leaf variables."),
    ("retain_grad without grad", lambda m: m.ones(1).retain_grad(),
     "can't retain_grad on Tensor that has requires_grad=False"),
    ("hook without grad", lambda m: m.ones(1).register_hook(lambda g: g),
     "cannot register a hook on a tensor that doesn't require gradient"),
    ("hook changes size", lambda m: _hooked(m, lambda g: g.sum()),
     "hook '<lambda>' has changed the size of value"),
    ("leaf hook changes size", lambda m: _leaf_hooked(m), "hook 'halve' has changed the size"),
    ("assign grad of other size", lambda m: setattr(_leaf(m, 2), "grad", m.ones(3)),
     "attempting to assign a gradient of size '[3]' to a tensor of size '[2]'"),
    ("assign grad of other dtype", lambda m: setattr(_leaf(m, 2), "grad",
                                                     m.ones(2, dtype=m.float64)),
     "attempting to assign a gradient with dtype"),
    ("assign non-tensor grad", lambda m: setattr(_leaf(m, 2), "grad", 3.0),
     "assigned grad expected to be a Tensor or None but got grad of type float"),
    ("setitem shape", lambda m: m.zeros(2, 3).__setitem__(m.ones(2, 3) > 0, m.ones(5)),
     "shape mismatch: value tensor of shape [5] cannot be broadcast to indexing result of "
     "shape [6]"),
    ("numpy with grad", lambda m: _leaf(m, 1).numpy(),
     "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."),
    ("modified saved tensor", lambda m: _modified(m),
     "one of the variables needed for gradient computation has been modified by an inplace "
     "operation"),
    ("in-place on leaf", lambda m: _leaf(m, 2).add_(1),
     "a leaf Variable that requires grad is being used in an in-place operation."),
    ("in-place on view of leaf", lambda m: _leaf(m, 2)[0].mul_(2),
     "a view of a leaf Variable that requires grad is being used in an in-place operation."),
    ("in-place float into long", lambda m: m.tensor([1, 2]).mul_(1.5),
     "result type Float can't be cast to the desired output type Long"),
    ("in-place broadcast", lambda m: m.zeros(3).add_(m.ones(2, 3)),
     "doesn't match the broadcast shape [2, 3]"),
    # shapes
    ("broadcast add", lambda m: m.ones(2, 3) + m.ones(4),
     "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"),
    ("broadcast mul", lambda m: m.ones(2, 3) * m.ones(5, 1, 2),
     "must match the size of tensor b (2) at non-singleton dimension 2"),
    ("where condition", lambda m: m.where(m.ones(5) > 0, m.ones(3), m.ones(3)),
     "The size of tensor a (5) must match the size of tensor b (3) at non-singleton dimension 0"),
    ("matmul", lambda m: m.ones(2, 3) @ m.ones(4, 5),
     "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
    ("matmul 0-d", lambda m: m.matmul(m.ones(()), m.ones(2)),
     "both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
    ("dot", lambda m: m.dot(m.ones(2), m.ones(3)), "inconsistent tensor size"),
    ("reshape", lambda m: m.ones(2, 3).reshape(4, 4), "shape '[4, 4]' is invalid for input of size 6"),
    ("view two -1", lambda m: m.ones(2, 3).view(-1, -1), "only one dimension can be inferred"),
    ("expand", lambda m: m.ones(2, 3).expand(4, 3),
     "The expanded size of the tensor (4) must match the existing size (2) at non-singleton "
     "dimension 0.  Target sizes: [4, 3].  Tensor sizes: [2, 3]"),
    ("expand fewer dims", lambda m: m.ones(2, 3).expand(3),
     "the number of sizes provided (1) must be greater or equal to the number of dimensions in "
     "the tensor (2)"),
    ("cat sizes", lambda m: m.cat([m.ones(2, 3), m.ones(2, 4)]),
     "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for "
     "tensor number 1 in the list."),
    ("cat empty list", lambda m: m.cat([]), "expected a non-empty list of Tensors"),
    ("stack sizes", lambda m: m.stack([m.ones(2), m.ones(3)]),
     "stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1"),
    ("permute length", lambda m: m.ones(2, 3).permute(0), "number of dimensions in the tensor "
                                                           "input does not match the length of "
                                                           "the desired ordering of dimensions"),
    ("dim out of range", lambda m: m.ones(2, 3).sum(2),
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ("unsqueeze dim", lambda m: m.ones(2).unsqueeze(3),
     "Dimension out of range (expected to be in range of [-2, 1], but got 3)"),
    ("softmax dim", lambda m: m.ones(2).softmax(1),
     "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    ("index out of range", lambda m: m.ones(2, 3)[2], "index 2 is out of bounds for dimension 0 "
                                                      "with size 2"),
    ("too many indices", lambda m: m.ones(2)[0, 0], "too many indices for tensor of dimension 1"),
    ("0-d index", lambda m: m.tensor(1.0)[0], "invalid index of a 0-dim tensor"),
    ("float index", lambda m: m.ones(3)[m.tensor([0.0])], "tensors used as indices must be long"),
    ("max of empty", lambda m: m.ones(0).max(), "Expected reduction dim to be specified for "
                                                "input.numel() == 0"),
    ("amax of empty dim", lambda m: m.ones(0, 2).amax(0), "Expected reduction dim 0 to have "
                                                          "non-zero size"),
    ("mean of ints", lambda m: m.tensor([1, 2]).mean(), "mean(): could not infer output dtype"),
    ("item of many", lambda m: m.ones(3).item(), "a Tensor with 3 elements cannot be converted "
                                                 "to Scalar"),
    ("bool of many", lambda m: bool(m.ones(3)), "Boolean value of Tensor with more than one "
                                                "value is ambiguous"),
    ("clamp without bounds", lambda m: m.ones(2).clamp(), "At least one of 'min' or 'max' must "
                                                          "not be None"),
    ("bool subtraction", lambda m: m.tensor([True]) - m.tensor([False]),
     "Subtraction, the `-` operator, with two bool tensors is not supported"),
    ("len of 0-d", lambda m: len(m.tensor(1.0)), "len() of a 0-d tensor"),
    ("bool negation", lambda m: -m.tensor([True]), "Negation, the `-` operator, on a bool tensor "
                                                   "is not supported."),
    ("int negative power", lambda m: m.tensor([1, 2]) ** -1, "Integers to negative integer powers "
                                                            "are not allowed."),
    ("iterate 0-d", lambda m: iter(m.tensor(1.0)), "iteration over a 0-d tensor"),
]


def _grad_of(m, f):
    x = _leaf(m, 2)
    m.autograd.grad(f(x), x)


def _hooked(m, hook):
    x = _leaf(m, 2)
    y = x * 1
    y.register_hook(hook)
    y.sum().backward()


def _leaf_hooked(m):
    def halve(g):
        return g[:1]
    x = _leaf(m, 2)
    x.register_hook(halve)
    (x * 2).sum().backward()


def _twice(m):
    y = _leaf(m, 2).exp().sum()
    y.backward()
    y.backward()


def _unused(m):
    x, z = _leaf(m, 1), _leaf(m, 1)
    m.autograd.grad((x * 2).sum(), [x, z])


def _modified(m):
    x = _leaf(m, 2)
    y = x.sigmoid()
    y.mul_(2)
    y.sum().backward()


@pytest.mark.parametrize("name,call,says", CASES, ids=[c[0] for c in CASES])
def test_error_like_torch(name, call, says):
    with pytest.raises(Exception) as expected:
        call(torch)
    assert says in str(expected.value), f"torch says: {expected.value}"
    with pytest.raises(Exception) as got:
        call(ag)
    assert type(got.value) is type(expected.value), f"{type(got.value)}: {got.value}"
    assert says in str(got.value)
