"""Recurrent modules (torch.nn.modules.rnn): RNN, LSTM, GRU and their cells, with torch's
parameter names, init, shapes and errors. Built from arraygrad ops, so autograd, forward AD and
the func transforms see through them; the loop over time steps is the only Python loop."""
import math
import numbers
import warnings

from ...ops import creation, elementwise as ew, index as ix, shape as sh
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, padded_sorted
from .module import Module

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# NOTE [recurrent steps]: one function per mode computes one time step from the input's
# projection `xw` = x @ w_ih.T + b_ih (computed for the whole sequence at once by the modules,
# per step by the cells) and the previous state; the modules and the cells share them.

def _rnn_step(xw, h, w_hh, b_hh, act):
    return act(xw + F.linear(h, w_hh, b_hh))


def _lstm_step(xw, state, w_hh, b_hh, w_hr=None):
    h, c = state
    i, f, g, o = (xw + F.linear(h, w_hh, b_hh)).chunk(4, -1)
    c = F.sigmoid(f) * c + F.sigmoid(i) * F.tanh(g)
    h = F.sigmoid(o) * F.tanh(c)
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


def _gru_step(xw, h, w_hh, b_hh):
    x_r, x_z, x_n = xw.chunk(3, -1)
    h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, -1)
    r = F.sigmoid(x_r + h_r)
    z = F.sigmoid(x_z + h_z)
    n = F.tanh(x_n + r * h_n)
    return (1 - z) * n + z * h


def _activation(nonlinearity):
    if nonlinearity == "tanh":
        return F.tanh
    if nonlinearity == "relu":
        return F.relu
    raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")


class RNNBase(Module):
    """Layers x directions of one recurrence; parameters `weight_ih_l{k}[_reverse]` etc."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if (not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1
                or isinstance(dropout, bool)):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}")
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._all_weights = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * num_directions
            for direction in range(num_directions):
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for stem, shp in shapes:
                    setattr(self, stem + suffix, Parameter(creation.empty(*shp, dtype=dtype)))
                    names.append(stem + suffix)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self):
        """cuDNN's packed weight layout; over NumPy the weights are already what is used."""

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- forward ------------------------------------------------------------------------------

    def _state_shapes(self, batch):
        """Expected shapes of h_0 (and c_0 for LSTM), without the batch dim when unbatched."""
        layers = self.num_layers * (2 if self.bidirectional else 1)
        h = self.proj_size if self.proj_size > 0 else self.hidden_size
        lead = (layers,) if batch is None else (layers, batch)
        return [lead + (h,), lead + (self.hidden_size,)][:2 if self.mode == "LSTM" else 1]

    def _check_input(self, input):
        name = type(self).__name__
        if input.ndim not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D tensor "
                             "instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")
        if input.shape[1 if input.ndim == 3 and self.batch_first else 0] == 0:
            raise RuntimeError(f"Expected sequence length to be larger than 0 in {name}")
        weight = self.weight_ih_l0
        if input.dtype != weight.dtype:
            raise ValueError(f"{name} input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight.dtype}). Convert input: input.to({weight.dtype}), or "
                             f"convert model: model.to({input.dtype})")

    def _initial_states(self, hx, input, batched):
        """h_0 (and c_0) as (layers*directions, N, H) tensors, zeros where not given."""
        if hx is None:
            return [creation.zeros(*s, dtype=input.dtype)
                    for s in self._state_shapes(input.shape[1])]
        shapes = self._state_shapes(input.shape[1] if batched else None)
        if self.mode == "LSTM" and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError("LSTM: hx must be a tuple (h_0, c_0) of tensors")
        states = list(hx) if self.mode == "LSTM" else [hx]
        want = 3 if batched else 2
        if any(s.ndim != want for s in states):
            kind = "batched 3-D" if batched else "unbatched 2-D"
            if self.mode == "LSTM":
                got = ", ".join(f"{s.ndim}-D" for s in states)
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but "
                                   f"got ({got}) tensors")
            raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                               f"{states[0].ndim}-D tensor")
        for k, (s, expected) in enumerate(zip(states, shapes)):
            if tuple(s.shape) != expected:
                which = "hidden size" if self.mode != "LSTM" else f"hidden[{k}] size"
                raise RuntimeError(f"Expected {which} {expected}, got {list(s.shape)}")
        return states if batched else [s.unsqueeze(1) for s in states]

    def _run_direction(self, xs, state, weights, reverse, valid=None):
        """One layer in one direction over the time steps `xs` (list of (N, G) projections).
        `valid` (packed input): per step, the (N, 1) mask of sequences still running; the
        others keep their state, so a reverse pass starts at each sequence's own end."""
        w_hh = weights["weight_hh"]
        b_hh = weights.get("bias_hh")
        act = _activation(self.nonlinearity) if self.mode.startswith("RNN") else None
        steps = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
        outputs = []
        for t in steps:
            xw = xs[t]
            if self.mode == "LSTM":
                new = _lstm_step(xw, state, w_hh, b_hh, weights.get("weight_hr"))
                if valid is not None:
                    new = tuple(ew.where(valid[t], n, s) for n, s in zip(new, state))
                state = new
                outputs.append(state[0])
            else:
                if self.mode == "GRU":
                    new = _gru_step(xw, state, w_hh, b_hh)
                else:
                    new = _rnn_step(xw, state, w_hh, b_hh, act)
                state = new if valid is None else ew.where(valid[t], new, state)
                outputs.append(state)
        if reverse:
            outputs.reverse()
        return sh.stack(outputs, 0), state

    def _check_packed(self, data):
        if data.ndim != 2:
            raise ValueError(f"{type(self).__name__}: Expected packed data to be 2D (sum of "
                             f"lengths, input_size), got {data.ndim}D")
        self._check_input(data.unsqueeze(1))

    def forward(self, input, hx=None):
        packed = isinstance(input, PackedSequence)
        valid = None
        if packed:
            self._check_packed(input.data)
            x, mask, _ = padded_sorted(input)
            valid = sh.unbind(mask.unsqueeze(-1), 0)
            batched = True
            if hx is not None and input.sorted_indices is not None:
                hx = _permute(hx, input.sorted_indices)
        else:
            self._check_input(input)
            batched = input.ndim == 3
            if not batched:
                x = input.unsqueeze(1)
            else:
                x = input.transpose(0, 1) if self.batch_first else input
        states = self._initial_states(hx, x, batched)
        directions = 2 if self.bidirectional else 1
        finals = [[] for _ in states]
        for layer in range(self.num_layers):
            if layer > 0 and self.dropout > 0 and self.training:
                x = F.dropout(x, self.dropout, True)
            outs = []
            for direction in range(directions):
                k = layer * directions + direction
                weights = {name.rsplit("_l", 1)[0]: getattr(self, name)
                           for name in self._all_weights[k]}
                xw = F.linear(x, weights["weight_ih"], weights.get("bias_ih"))
                state = tuple(s[k] for s in states)
                out, state = self._run_direction(sh.unbind(xw, 0),
                                                 state if self.mode == "LSTM" else state[0],
                                                 weights, direction == 1, valid)
                outs.append(out)
                for acc, s in zip(finals, state if self.mode == "LSTM" else (state,)):
                    acc.append(s)
            x = outs[0] if directions == 1 else sh.cat(outs, -1)
        finals = [sh.stack(acc, 0) for acc in finals]
        if packed:
            finals = _permute(finals, input.unsorted_indices)
            out = PackedSequence(x[mask], input.batch_sizes, input.sorted_indices,
                                 input.unsorted_indices)
            return out, (tuple(finals) if self.mode == "LSTM" else finals[0])
        if not batched:
            x = x.squeeze(1)
            finals = [s.squeeze(1) for s in finals]
        elif self.batch_first:
            x = x.transpose(0, 1)
        return x, (tuple(finals) if self.mode == "LSTM" else finals[0])


def _permute(states, order):
    """Hidden states (a tensor, or a sequence of them) with the batch dim (1) in `order`."""
    if order is None:
        return states
    if isinstance(states, (tuple, list)):
        return type(states)(ix.index_select(s, 1, order) for s in states)
    return ix.index_select(states, 1, order)


class RNN(RNNBase):
    """Elman RNN: h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh), act tanh or relu."""

    def __init__(self, *args, nonlinearity="tanh", **kwargs):
        if len(args) > 3:       # torch's positional order: ..., num_layers, nonlinearity, bias
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        _activation(nonlinearity)
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory; gates (i, f, g, o) in that order as torch, optional projection."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Gated recurrent unit; gates (r, z, n) in that order as torch."""

    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)


class RNNCellBase(Module):
    """One time step; parameters weight_ih, weight_hh, bias_ih, bias_hh as torch."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(creation.empty(num_chunks * hidden_size, input_size,
                                                  dtype=dtype))
        self.weight_hh = Parameter(creation.empty(num_chunks * hidden_size, hidden_size,
                                                  dtype=dtype))
        if bias:
            self.bias_ih = Parameter(creation.empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(creation.empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    reset_parameters = RNNBase.reset_parameters

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(self, input, states):
        """Checks shapes as torch does; returns (x, states, batched) with a batch dim added."""
        name = type(self).__name__
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} "
                               f"expected {self.input_size}")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        out = []
        for k, s in enumerate(states):
            if s is None:
                s = creation.zeros(x.shape[0], self.hidden_size, dtype=input.dtype)
            else:
                if s.ndim != input.ndim:
                    raise RuntimeError(f"{name}: Expected hidden{'' if k == 0 else '[1]'} to be "
                                       f"{input.ndim}D like the input, got {s.ndim}D")
                s = s if batched else s.unsqueeze(0)
                if s.shape[0] != x.shape[0]:
                    raise RuntimeError(f"Input batch size {x.shape[0]} doesn't match hidden{k} "
                                       f"batch size {s.shape[0]}")
                if s.shape[1] != self.hidden_size:
                    raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got "
                                       f"{s.shape[1]}, expected {self.hidden_size}")
            out.append(s)
        return x, out, batched


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        _activation(nonlinearity)
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, 1, dtype=dtype)

    def forward(self, input, hx=None):
        x, (h,), batched = self._prepare(input, [hx])
        h = _rnn_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh,
                      self.bias_hh, _activation(self.nonlinearity))
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, dtype=dtype)

    def forward(self, input, hx=None):
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError("LSTMCell: hx must be a tuple (h_0, c_0) of tensors")
        x, (h, c), batched = self._prepare(input, [None, None] if hx is None else list(hx))
        h, c = _lstm_step(F.linear(x, self.weight_ih, self.bias_ih), (h, c), self.weight_hh,
                          self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, dtype=dtype)

    def forward(self, input, hx=None):
        x, (h,), batched = self._prepare(input, [hx])
        h = _gru_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh,
                      self.bias_hh)
        return h if batched else h.squeeze(0)
