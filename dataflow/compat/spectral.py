"""``df.spectral``: TF1's older name of the Fourier transforms and DCTs of ``df.signal``, each
the same function (``df.spectral.fft is df.signal.fft``)."""

from .signal import (
    dct,
    fft,
    fft2d,
    fft3d,
    idct,
    ifft,
    ifft2d,
    ifft3d,
    irfft,
    irfft2d,
    irfft3d,
    rfft,
    rfft2d,
    rfft3d,
)

__all__ = [
    "dct",
    "fft",
    "fft2d",
    "fft3d",
    "idct",
    "ifft",
    "ifft2d",
    "ifft3d",
    "irfft",
    "irfft2d",
    "irfft3d",
    "rfft",
    "rfft2d",
    "rfft3d",
]
