"""torch.nn.utils.rnn: sequences of different lengths, padded or packed.

    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    out, h = lstm(packed)                                   # padding never enters the recurrence
    y, lengths = pad_packed_sequence(out, batch_first=True)

# NOTE [packed layout]
A PackedSequence holds the valid time steps of a batch sorted by decreasing length, time
major: `data` is (sum of lengths, *) with step 0 of every sequence first, then step 1 of
those longer than 1, ...; `batch_sizes[t]` counts the sequences longer than t. With the
batch sorted, that order is the row-major order of the (T, B) mask `t < length[b]`, so
packing is `padded[mask]` and unpacking writes `data` back through the same mask: one
indexing op each way, differentiable, with no loop over sequences or steps.
"""
from collections import namedtuple

from ... import _tensor as _t
from ... import dtypes as _dt
from ...ops import creation, index as ix, reduce as rd, shape as sh
from ...ops.resample import pad

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "pack_sequence", "unpad_sequence", "unpack_sequence", "invert_permutation"]

Tensor = _t.Tensor


class PackedSequence(namedtuple("PackedSequence",
                                ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """The packed form of a batch of sequences (NOTE [packed layout]); build it with
    `pack_padded_sequence` or `pack_sequence`, not directly."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            raise RuntimeError("PackedSequence: batch_sizes is required; build packed sequences "
                               "with pack_padded_sequence or pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """The same packing with `data` converted (indices stay int64, as torch)."""
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else self._replace(data=data)

    def cpu(self):
        return self

    def double(self):
        return self.to(_dt.float64)

    def float(self):
        return self.to(_dt.float32)

    def half(self):
        return self.to(_dt.float16)

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def invert_permutation(permutation):
    """The permutation that undoes `permutation` (None stays None)."""
    if permutation is None:
        return None
    return ix.scatter(creation.empty_like(permutation), 0, permutation,
                      creation.arange(permutation.numel()))


def _lengths_tensor(lengths):
    if isinstance(lengths, Tensor):
        if lengths.ndim != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D tensor, but got "
                               f"{lengths.ndim}D")
        return lengths.to(_dt.int64)
    return creation.tensor(list(lengths), dtype=_dt.int64)


def _time_mask(lengths, total):
    """(total, B) bool: step t of sequence b is valid."""
    return creation.arange(total).unsqueeze(1) < lengths.unsqueeze(0)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (T, B, *) (or (B, T, *) with batch_first) of sequences of
    `lengths`; with enforce_sorted=False the lengths may come in any order."""
    lengths = _lengths_tensor(lengths)
    batch_dim = 0 if batch_first else 1
    if lengths.numel() != input.shape[batch_dim]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{lengths.numel()} (batch_size={input.shape[batch_dim]})")
    if lengths.numel() and int(lengths.min()) <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if enforce_sorted:
        if lengths.numel() > 1 and bool((lengths[1:] > lengths[:-1]).any()):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                               "`enforce_sorted` is True. You can pass `enforce_sorted=False` "
                               "to pack_padded_sequence and/or pack_sequence to sidestep this "
                               "requirement if you do not need ONNX exportability.")
        sorted_indices = None
    else:
        lengths, sorted_indices = rd.sort(lengths, descending=True, stable=True)
        input = ix.index_select(input, batch_dim, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    longest = int(lengths[0])
    if longest > input.shape[0]:
        raise RuntimeError(f"pack_padded_sequence: a length ({longest}) exceeds the padded "
                           f"sequence length ({input.shape[0]})")
    mask = _time_mask(lengths, longest)
    batch_sizes = mask.sum(1)
    return PackedSequence(input[:longest][mask], batch_sizes, sorted_indices)


def padded_sorted(sequence, total_length=None, padding_value=0.0):
    """The packed batch as a padded (T, B, *) tensor in its sorted batch order, the (T, B)
    mask of valid steps and the lengths (what the recurrent modules run on)."""
    batch_sizes = sequence.batch_sizes
    longest = batch_sizes.numel()
    total = longest if total_length is None else total_length
    lengths = (creation.arange(batch_sizes[0].item()).unsqueeze(0) <
               batch_sizes.unsqueeze(1)).sum(0)
    mask = _time_mask(lengths, total)
    data = sequence.data
    padded = creation.full((total, mask.shape[1]) + tuple(data.shape[1:]), padding_value,
                           dtype=data.dtype)
    padded = ix.index_put(padded, (mask,), data)
    return padded, mask, lengths


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of pack_padded_sequence: (padded batch, lengths) in the original order."""
    longest = sequence.batch_sizes.numel()
    if total_length is not None and total_length < longest:
        raise ValueError(f"Expected total_length to be at least the length of the longest "
                         f"sequence in input, but got total_length={total_length} and max "
                         f"sequence length being {longest}")
    padded, _, lengths = padded_sorted(sequence, total_length, padding_value)
    if sequence.unsorted_indices is not None:
        padded = ix.index_select(padded, 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors of shapes (L_i, *) into (max L, B, *) (or (B, max L, *)), padded with
    `padding_value` on `padding_side`."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = sh.unbind(sequences, 0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.shape[0]
        spec = (0, 0) * (s.ndim - 1) + ((0, missing) if padding_side == "right" else (missing, 0))
        padded.append(pad(s, spec, value=padding_value) if missing else s)
    return sh.stack(padded, 0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of tensors of shapes (L_i, *)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences of a padded batch, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, _lengths_tensor(lengths).tolist())]


def unpack_sequence(packed_sequences):
    """The list of sequences of a PackedSequence, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
