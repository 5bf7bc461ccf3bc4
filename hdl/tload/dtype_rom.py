"""The HDL's own table of element sizes and pad patterns (docs/design.md D1, D5, D9).

Written independently of ``model/dtypes.py`` on purpose: the golden-vs-HDL tests
compare the two, so a wrong pad value on either side shows up as a mismatch.

Each entry: code -> (log2 element bytes, Max, Min, +inf, -inf); the inf patterns
are used under the ``ieee-inf`` profile and are None for types without infinity.
"""

__all__ = ["DTYPE_ROM", "pad_pattern"]

#        code: (le, Max,                 Min,                 +inf,                -inf)
DTYPE_ROM = {
    0:  (3, 0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF, 0x7FF0000000000000, 0xFFF0000000000000),  # FP64
    1:  (2, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000),                                  # FP32
    2:  (2, 0x7F7FE000, 0xFF7FE000, 0x7F800000, 0xFF800000),                                  # TF32
    3:  (2, 0x7F7FF000, 0xFF7FF000, 0x7F800000, 0xFF800000),                                  # HF32
    4:  (1, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00),                                                  # FP16
    5:  (1, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80),                                                  # BF16
    6:  (0, 0x6E, 0xEE, 0x6F, 0xEF),                                                          # HiF8
    7:  (0, 0x7E, 0xFE, None, None),                                                          # E4M3
    8:  (0, 0x7B, 0xFB, 0x7C, 0xFC),                                                          # E5M2
    11: (0, 0x77, 0xFF, None, None),                                                          # E2M1x2
    12: (0, 0x77, 0xFF, None, None),                                                          # E1M2x2
    13: (0, 0xFE, 0x00, None, None),                                                          # E8M0
    14: (0, 0x77, 0xFF, None, None),                                                          # HiF4x2
    16: (3, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000, None, None),                              # S64
    17: (2, 0x7FFFFFFF, 0x80000000, None, None),                                              # S32
    18: (1, 0x7FFF, 0x8000, None, None),                                                      # S16
    19: (0, 0x7F, 0x80, None, None),                                                          # S8
    20: (0, 0x77, 0x88, None, None),                                                          # S4x2
    24: (3, 0xFFFFFFFFFFFFFFFF, 0x0, None, None),                                             # U64
    25: (2, 0xFFFFFFFF, 0x0, None, None),                                                     # U32
    26: (1, 0xFFFF, 0x0, None, None),                                                         # U16
    27: (0, 0xFF, 0x0, None, None),                                                           # U8
    28: (0, 0xFF, 0x0, None, None),                                                           # U4x2
}


def pad_pattern(code: int, pad: int, profile: str) -> int:
    """The element pattern for pad 0 Zero, 1 Max, 2 Min, 3 Null (Null: 0)."""
    le, mx, mn, pinf, ninf = DTYPE_ROM[code]
    if pad in (0, 3):
        return 0
    if profile == "ieee-inf" and pinf is not None:
        return pinf if pad == 1 else ninf
    return mx if pad == 1 else mn
