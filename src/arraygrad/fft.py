"""torch.fft: discrete Fourier transforms (ops/fft.py)."""
from .ops.fft import (fft, ifft, fft2, ifft2, fftn, ifftn, rfft, irfft, rfft2, irfft2,  # noqa: F401
                      rfftn, irfftn, hfft, ihfft, fftfreq, rfftfreq, fftshift, ifftshift)
