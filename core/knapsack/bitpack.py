"""Decision bits packed 64 to a uint64 word, shared by the knapsack DP kernels.

A DP row first writes one flag byte (0 or 1) per capacity, which vectorises
well; :func:`pack_flags` then turns eight flag bytes at a time into eight bits
with one multiplication (the bytes are read as a little-endian uint64), which is
several times faster than shifting single comparison results into a word.
"""

from __future__ import annotations

import sys

import numpy as np
from numba import njit

__all__ = ["WORD_BITS", "pack_flags", "test_bit", "words_for"]

WORD_BITS = 64

# Multiplying a uint64 whose eight bytes are 0 or 1 by this constant gathers the
# lowest bit of byte j into bit 56 + j; shifting right by 56 leaves the 8 flags.
_GATHER = np.uint64(0x0102040810204080)

if sys.byteorder != "little":  # pragma: no cover - every supported platform is little-endian
    raise ImportError("core.knapsack.bitpack assumes a little-endian machine")


@njit(cache=True, nogil=True)
def pack_flags(flags, first_word, out):
    """Pack flag bytes into bit words.

    Parameters
    ----------
    flags : (64 * k,) uint8 ndarray, contiguous
        0 or 1 per capacity.
    first_word : int
        Index of the first word to pack: ``out[j]`` holds the flags of
        capacities ``64 * (first_word + j)`` to ``64 * (first_word + j) + 63``,
        bit ``b`` for capacity ``64 * (first_word + j) + b``.
    out : (n_words,) uint64 ndarray
        Written in place.
    """
    octets = flags.view(np.uint64)
    base = np.uint64(first_word) * np.uint64(8)
    for j in range(np.uint64(len(out))):
        acc = np.uint64(0)
        for byte in range(np.uint64(8)):
            x = octets[base + j * np.uint64(8) + byte]
            acc |= ((x * _GATHER) >> np.uint64(56)) << (byte * np.uint64(8))
        out[j] = acc


@njit(cache=True, nogil=True)
def test_bit(words, first_word, index):
    """True when bit ``index`` is set in ``words`` whose first word covers ``64 * first_word``."""
    word = (index >> 6) - first_word
    return (words[word] >> np.uint64(index & 63)) & np.uint64(1) != 0


def words_for(lo, hi):
    """Number of 64-bit words that cover capacities ``lo..hi`` (arrays or ints)."""
    return (np.asarray(hi) >> 6) - (np.asarray(lo) >> 6) + 1
