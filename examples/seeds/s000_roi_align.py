"""Seed 000/001 (C++ docs), ROIAlignFunction: non-tensor state in saved_data.

The seed calls a native roi_align kernel; here a small average-pooling stand-in
(one pooled cell per region and channel) plays its part, below autograd as the
seed's AutoDispatchBelowADInplaceOrView guard asks.
"""
import arraygrad as torch


def roi_pool(input, rois, spatial_scale):
    """Mean of input[:, y0:y1, x0:x1] for each roi (x0, y0, x1, y1) -> [num_rois, C]."""
    out = []
    for r in rois.tolist():
        x0, y0, x1, y1 = (int(round(v * spatial_scale)) for v in r)
        out.append(input[:, y0:y1, x0:x1].mean((1, 2)))
    return torch.stack(out)


class ROIAlignFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio,
                aligned):
        ctx.saved_data["spatial_scale"] = spatial_scale
        ctx.saved_data["pooled_height"] = pooled_height
        ctx.saved_data["pooled_width"] = pooled_width
        ctx.saved_data["sampling_ratio"] = sampling_ratio
        ctx.saved_data["aligned"] = aligned
        ctx.saved_data["input_shape"] = input.size()
        ctx.save_for_backward(rois)
        with torch.no_grad():
            return roi_pool(input, rois, spatial_scale)

    @staticmethod
    def backward(ctx, grad_output):
        rois, = ctx.saved_tensors
        scale = ctx.saved_data["spatial_scale"]
        grad_input = torch.zeros(ctx.saved_data["input_shape"], dtype=grad_output.dtype)
        for k, r in enumerate(rois.tolist()):
            x0, y0, x1, y1 = (int(round(v * scale)) for v in r)
            area = (y1 - y0) * (x1 - x0)
            cell = grad_output[k].reshape(-1, 1, 1) / area
            grad_input[:, y0:y1, x0:x1] += cell
        return grad_input, None, None, None, None, None, None


input = torch.randn(2, 4, 4, dtype=torch.double, requires_grad=True)
rois = torch.tensor([[0.0, 0.0, 2.0, 2.0], [1.0, 1.0, 4.0, 3.0]], dtype=torch.double)
out = ROIAlignFunction.apply(input, rois, 1.0, 1, 1, 0, False)
out.sum().backward()
ok = torch.autograd.gradcheck(lambda x: ROIAlignFunction.apply(x, rois, 1.0, 1, 1, 0, False),
                              (input,))
print(out, ok)
