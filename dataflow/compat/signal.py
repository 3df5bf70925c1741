"""``df.signal``: ``tf.signal``'s Fourier transforms, framing, windows, spectrograms, DCTs and
mel-frequency features.  The FFTs are the same functions as the top-level names
(``df.signal.fft is df.fft``); ``fftnd``, ``rfftnd``, ... here take TensorFlow 2's
``input_tensor, fft_length=None, axes=None, norm=None`` where the top-level ones are the raw
ops."""

from ..ops.signal_ops import (
    dct,
    frame,
    hamming_window,
    hann_window,
    idct,
    kaiser_bessel_derived_window,
    kaiser_window,
    overlap_and_add,
    vorbis_window,
)
from ..ops.spectral_ops import (
    fft,
    fft2d,
    fft3d,
    fftshift,
    ifft,
    ifft2d,
    ifft3d,
    ifftshift,
    irfft,
    irfft2d,
    irfft3d,
    rfft,
    rfft2d,
    rfft3d,
)
from ..ops.spectral_ops import signal_fftnd as fftnd
from ..ops.spectral_ops import signal_ifftnd as ifftnd
from ..ops.spectral_ops import signal_irfftnd as irfftnd
from ..ops.spectral_ops import signal_rfftnd as rfftnd
from ..ops.spectrogram_ops import (
    inverse_mdct,
    inverse_stft,
    inverse_stft_window_fn,
    linear_to_mel_weight_matrix,
    mdct,
    mfccs_from_log_mel_spectrograms,
    stft,
)

__all__ = [
    "dct",
    "fft",
    "fft2d",
    "fft3d",
    "fftnd",
    "fftshift",
    "frame",
    "hamming_window",
    "hann_window",
    "idct",
    "ifft",
    "ifft2d",
    "ifft3d",
    "ifftnd",
    "ifftshift",
    "inverse_mdct",
    "inverse_stft",
    "inverse_stft_window_fn",
    "irfft",
    "irfft2d",
    "irfft3d",
    "irfftnd",
    "kaiser_bessel_derived_window",
    "kaiser_window",
    "linear_to_mel_weight_matrix",
    "mdct",
    "mfccs_from_log_mel_spectrograms",
    "overlap_and_add",
    "rfft",
    "rfft2d",
    "rfft3d",
    "rfftnd",
    "stft",
    "vorbis_window",
]
