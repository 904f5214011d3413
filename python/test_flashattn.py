"""Tests of python/flashattn.py (pytest).

Without the built library every test skips; without torch or a GPU only the
tests that need no device run: the mirror of fa_attention_params (every field
reaches the library, checked through its validation, which reads no memory)
and the argument checks of the binding. On a GPU: a subset of
FlashAttention-2's test grid against PyTorch's math path, both layouts, MHA,
GQA and MQA, lse, the masks, packed batches, strided and foreign arrays,
streams, and bad inputs.

    FLASHATTN_LIBRARY=build/06_fused_flash/libflashattn.so python3 -m pytest python/
"""

import math
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import flashattn  # noqa: E402


@pytest.fixture(scope="module")
def lib():
    try:
        return flashattn.library()
    except FileNotFoundError as error:  # a library that loads wrong fails instead
        pytest.skip(str(error))


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no GPU for torch")
    return torch


# --- No device: the binding and the mirror of the struct ----------------------------------

class FakeArray:
    """An array at a made-up device address (__cuda_array_interface__ v3):
    fa_attention_supported() validates without reading memory."""

    def __init__(self, shape, pointer, typestr="<f2", strides=None):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape),
            "typestr": typestr,
            "data": (pointer, False),
            "strides": strides,
            "version": 3,
        }


Q_AT, K_AT, V_AT, O_AT = (0x10000000 * i for i in range(1, 5))


def fake_call(q_shape=(2, 10, 6, 64), kv_shape=(2, 12, 3, 64), typestr="<f2", out_typestr=None,
              q_strides=None, o_at=O_AT):
    """q, k, v and out of a call at disjoint made-up addresses (strides in bytes)."""
    return dict(
        q=FakeArray(q_shape, Q_AT, typestr, q_strides),
        k=FakeArray(kv_shape, K_AT, typestr),
        v=FakeArray(kv_shape, V_AT, typestr),
        out=FakeArray(q_shape, o_at, out_typestr or typestr),
    )


def test_params_size_matches_the_library(lib):
    assert lib.fa_attention_params_size() == flashattn.ctypes.sizeof(flashattn.Params)


def auto_16_bit():
    """The kernel "auto" runs for fake_call(): v3 where the device runs it, else v2."""
    try:
        return flashattn.supported(**fake_call(), variant="v3")
    except flashattn.Error:
        return "v2 tensor cores"


def test_variant_chosen(lib):
    assert flashattn.supported(**fake_call()) == auto_16_bit()
    assert flashattn.supported(**fake_call(), variant="v2") == "v2 tensor cores"
    assert flashattn.supported(**fake_call(), variant="v1") == "v1 CUDA cores"
    odd = fake_call(q_shape=(2, 10, 6, 59), kv_shape=(2, 12, 3, 59))
    assert flashattn.supported(**odd) == "v1 CUDA cores"
    assert flashattn.supported(**fake_call(typestr="<f4")) == "v1 CUDA cores"
    bhnd = fake_call(q_shape=(2, 6, 10, 64), kv_shape=(2, 3, 12, 64))
    assert flashattn.supported(**bhnd, layout="bhnd") == auto_16_bit()
    for d in (96, 160, 256):
        call = fake_call(q_shape=(2, 10, 6, d), kv_shape=(2, 12, 3, d))
        assert flashattn.supported(**call) == auto_16_bit()
    d32 = fake_call(q_shape=(2, 10, 6, 32), kv_shape=(2, 12, 3, 32))
    assert flashattn.supported(**d32) == "v2 tensor cores"  # "auto" leaves d <= 32 to v2
    if auto_16_bit() == "v3 Hopper":  # which v3 runs by name
        assert flashattn.supported(**d32, variant="v3") == "v3 Hopper"


def expect_error(call, status_name, *fragments, **kwargs):
    with pytest.raises(flashattn.Error) as caught:
        flashattn.supported(**call, **kwargs)
    assert caught.value.name == status_name, str(caught.value)
    for fragment in fragments:
        assert fragment in str(caught.value), str(caught.value)


def test_v3_refusals_name_the_reason(lib):
    expect_error(fake_call(out_typestr="<f4"), "FA_ERR_UNSUPPORTED",
                 "v3 Hopper cannot run this call", "o_fp32 (v3 writes o in the input dtype)",
                 variant="v3")
    try:  # a mask is no reason: refused, where it is, for the device alone
        assert flashattn.supported(**fake_call(), variant="v3", causal=True) == "v3 Hopper"
    except flashattn.Error as refusal:
        assert refusal.name == "FA_ERR_NO_DEVICE" or "compute capability" in str(refusal), (
            str(refusal))
    expect_error(fake_call(typestr="<f4"), "FA_ERR_UNSUPPORTED", "v3 Hopper needs what v2 needs",
                 "dtype fp32", variant="v3")


def test_every_field_reaches_the_library(lib):
    # heads_q and heads_kv (bnhd: dimension 2; bhnd: dimension 1)
    expect_error(fake_call(kv_shape=(2, 12, 4, 64)), "FA_ERR_INVALID_SIZE",
                 "heads_q = 6 is not a multiple of heads_kv = 4")
    expect_error(fake_call(q_shape=(2, 6, 10, 64), kv_shape=(2, 4, 12, 64)),
                 "FA_ERR_INVALID_SIZE", "heads_q = 6 is not a multiple of heads_kv = 4",
                 layout="bhnd")
    # head_dim
    expect_error(fake_call(q_shape=(2, 10, 6, 300), kv_shape=(2, 12, 3, 300)),
                 "FA_ERR_UNSUPPORTED", "head_dim = 300")
    # scale
    expect_error(fake_call(), "FA_ERR_INVALID_ARGUMENT", "scale = -1", scale=-1.0)
    # dtype and variant
    expect_error(fake_call(typestr="<f4"), "FA_ERR_UNSUPPORTED",
                 "v2 tensor cores cannot run this call: dtype fp32", variant="v2")
    # strides: the row of bnhd is dimension 1, of bhnd dimension 2
    strides = (10 * 6 * 64 * 2, -6 * 64 * 2, 64 * 2, 2)
    expect_error(fake_call(q_strides=strides), "FA_ERR_BAD_STRIDE", "q_strides.row = -384")
    expect_error(fake_call(q_shape=(2, 6, 10, 64), kv_shape=(2, 3, 12, 64), q_strides=strides),
                 "FA_ERR_BAD_STRIDE", "q_strides.head = -384", layout="bhnd")
    # o, its extent (2 x 10 x 6 x 64 fp16 = 15360 bytes) and q's
    expect_error(fake_call(o_at=Q_AT), "FA_ERR_INVALID_ARGUMENT",
                 "(15360 bytes) overlaps q", "(15360 bytes)")
    # o_fp32: an fp32 o 2 bytes off 4-byte alignment
    expect_error(fake_call(out_typestr="<f4", o_at=O_AT + 2), "FA_ERR_MISALIGNED",
                 "o = ", "is not 4-byte aligned")
    # lse: 2 x 6 x 10 floats = 480 bytes
    call = fake_call()
    expect_error(call, "FA_ERR_INVALID_ARGUMENT", "lse = ", "(480 bytes) overlaps q",
                 lse=FakeArray((2, 6, 10), Q_AT, "<f4"))
    # nk = 0: k and v are never read
    empty = fake_call(kv_shape=(2, 0, 3, 64))
    empty["k"] = FakeArray((2, 0, 3, 64), 0)
    empty["v"] = FakeArray((2, 0, 3, 64), 0)
    assert flashattn.supported(**empty) in ("v1 CUDA cores", "v2 tensor cores")


CUQ_AT, CUK_AT = 0x50000000, 0x60000000


def fake_packed(total_q=10, total_k=12, batch=3, o_at=O_AT, cu_q_at=CUQ_AT):
    """A packed call at made-up addresses: q, out [total_q, 6, 64], k, v [total_k, 3, 64]."""
    return dict(
        q=FakeArray((total_q, 6, 64), Q_AT),
        k=FakeArray((total_k, 3, 64), K_AT),
        v=FakeArray((total_k, 3, 64), V_AT),
        out=FakeArray((total_q, 6, 64), o_at),
        cu_seqlens_q=FakeArray((batch + 1,), cu_q_at, "<i4"),
        cu_seqlens_k=FakeArray((batch + 1,), CUK_AT, "<i4"),
    )


def test_packed_fields_reach_the_library(lib):
    assert flashattn.supported_packed(**fake_packed(), max_seqlen_q=5, max_seqlen_k=6) == \
        auto_16_bit()
    # max_seqlen is a bound: a model's longest length is fine
    assert flashattn.supported_packed(**fake_packed(), max_seqlen_q=4096, max_seqlen_k=4096)
    cases = [
        (dict(max_seqlen_q=-1, max_seqlen_k=6), "FA_ERR_INVALID_SIZE", "max_seqlen_q = -1"),
        (dict(max_seqlen_q=5, max_seqlen_k=-2), "FA_ERR_INVALID_SIZE", "max_seqlen_k = -2"),
        # lse [6, 10] floats: 240 bytes
        (dict(max_seqlen_q=5, max_seqlen_k=6, lse=FakeArray((6, 10), Q_AT, "<f4")),
         "FA_ERR_INVALID_ARGUMENT", "(240 bytes) overlaps q"),
    ]
    for kwargs, status, fragment in cases:
        with pytest.raises(flashattn.Error) as caught:
            flashattn.supported_packed(**fake_packed(), **kwargs)
        assert caught.value.name == status and fragment in str(caught.value), str(caught.value)
    with pytest.raises(flashattn.Error) as caught:
        flashattn.supported_packed(**fake_packed(o_at=CUQ_AT - 64), max_seqlen_q=5,
                                   max_seqlen_k=6)
    assert "overlaps cu_seqlens_q" in str(caught.value), str(caught.value)
    call = fake_packed()
    call["cu_seqlens_k"] = FakeArray((3,), CUK_AT, "<i4")
    with pytest.raises(ValueError, match="cu_seqlens_q has 4 offsets, cu_seqlens_k 3"):
        flashattn.supported_packed(**call, max_seqlen_q=5, max_seqlen_k=6)
    call = fake_packed()
    call["cu_seqlens_q"] = FakeArray((4,), CUQ_AT, "<i8")
    with pytest.raises(ValueError, match="int32"):
        flashattn.supported_packed(**call, max_seqlen_q=5, max_seqlen_k=6)


def test_v2_needs_16_byte_rows(lib):
    expect_error(fake_call(o_at=O_AT + 8), "FA_ERR_MISALIGNED",
                 "o is not 16-byte aligned at every row", variant="v2")
    assert flashattn.supported(**fake_call(o_at=O_AT + 8)) == "v1 CUDA cores"


def test_masks_reach_the_library(lib):
    """causal= and window= become mask, window_left and window_right: a window's bad
    extent is refused by the library, naming both."""
    for causal in (False, True, "top_left", "bottom_right"):
        assert flashattn.supported(**fake_call(), causal=causal) == auto_16_bit()
    expect_error(fake_call(), "FA_ERR_INVALID_ARGUMENT", "window_left = -2, window_right = 5",
                 window=(-2, 5))
    expect_error(fake_call(), "FA_ERR_INVALID_ARGUMENT", "window_left = -3, window_right = 0",
                 window=(-3, 4), causal=True)  # causal: the right extent is 0
    assert flashattn.supported(**fake_call(), window=(3, -7), causal=True) == auto_16_bit()
    assert flashattn._mask(True, (5, 9)) == (flashattn.FA_MASK_WINDOW, 5, 0)
    assert flashattn._mask("top_left", None) == (flashattn.FA_MASK_CAUSAL_TOP_LEFT, 0, 0)


@pytest.mark.parametrize("kwargs, message", [
    (dict(causal="lower_right"), "causal = 'lower_right'"),
    (dict(causal=[True]), "causal = \\[True\\]"),
    (dict(causal="top_left", window=(4, 0)), "bottom-right diagonal"),
])
def test_bad_masks(kwargs, message):
    with pytest.raises(ValueError, match=message):
        flashattn.supported(**fake_call(), **kwargs)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(layout="nbhd"), ValueError, "layout"),
    (dict(variant="v4"), ValueError, "variant"),
    (dict(scale=0.0), ValueError, "scale = 0"),
])
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        flashattn.supported(**fake_call(), **kwargs)


def test_bad_arrays():
    with pytest.raises(ValueError, match="4 dimensions"):
        flashattn.supported(**dict(fake_call(), q=FakeArray((2, 10, 64), Q_AT)))
    with pytest.raises(ValueError, match="last dimension must be contiguous"):
        flashattn.supported(**fake_call(q_strides=(15360, 1536, 256, 4)))
    with pytest.raises(ValueError, match="same batch and head_dim"):
        flashattn.supported(**fake_call(kv_shape=(3, 12, 3, 64)))
    with pytest.raises(ValueError, match="out= is required"):
        flashattn.supported(**dict(fake_call(), out=None))
    with pytest.raises(ValueError, match="typestr"):
        flashattn.supported(**fake_call(typestr="<i4"))
    with pytest.raises(TypeError, match="__cuda_array_interface__"):
        flashattn.supported(**dict(fake_call(), q=[[1.0]]))


def test_torch_is_imported_lazily(lib):
    """Arrays that are not torch tensors never import torch."""
    if "torch" in sys.modules:
        pytest.skip("torch was imported before this test")
    flashattn.supported(**fake_call())
    assert "torch" not in sys.modules


# --- On a GPU: against PyTorch's math path -----------------------------------------------

# FlashAttention-2's tests/test_flash_attn.py::test_flash_attn_output grid, a subset:
# its head dims and sequence lengths, batch 2, 6 query heads over 6, 2 or 1 key/value heads.
HEAD_DIMS = [32, 40, 59, 64, 80, 96, 111, 128, 160, 192, 224, 256]
SEQLENS = [(113, 203), (128, 217), (108, 256), (512, 256), (1023, 1024), (1, 239)]
HEADS_KV = {"mha": 6, "gqa": 2, "mqa": 1}
BATCH, HEADS_Q = 2, 6

UNIT_ROUNDOFF = {"bfloat16": 2.0 ** -8, "float16": 2.0 ** -11, "float32": 2.0 ** -24}

# lse: scores summed in fp32 over head_dim products, exp2 and log2 in fp32: a few
# 1e-6 at these magnitudes; 1e-3 still catches a wrong max, scale, row or head.
LSE_TOLERANCE = 1e-3


def math_sdpa(torch):
    """PyTorch's math backend of scaled_dot_product_attention."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        return sdpa_kernel(SDPBackend.MATH)
    except ImportError:
        return torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True,
                                              enable_mem_efficient=False)


def reference(torch, q, k, v, dtype, scale):
    """o of PyTorch's math path in @p dtype for [B, N, H, D] views, GQA by repeat_interleave."""
    group = q.shape[2] // k.shape[2]
    k = k.repeat_interleave(group, dim=2)
    v = v.repeat_interleave(group, dim=2)
    qt, kt, vt = (t.to(dtype).transpose(1, 2) for t in (q, k, v))
    with math_sdpa(torch):
        o = torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, scale=scale)
    return o.transpose(1, 2)


def reference_lse(torch, q, k, scale):
    """lse [B, Hq, Nq] in float64 for [B, N, H, D] views."""
    k = k.repeat_interleave(q.shape[2] // k.shape[2], dim=2)
    scores = torch.einsum("bqhd,bkhd->bhqk", q.double(), k.double()) * scale
    return torch.logsumexp(scores, dim=-1)


def inputs(torch, nq, nk, heads_kv, d, dtype, layout, seed=0):
    """q, k, v in @p layout and their [B, N, H, D] views."""
    generator = torch.Generator(device="cuda").manual_seed(seed)
    made = []
    for n, heads in ((nq, HEADS_Q), (nk, heads_kv), (nk, heads_kv)):
        shape = (BATCH, n, heads, d) if layout == "bnhd" else (BATCH, heads, n, d)
        x = torch.randn(shape, device="cuda", dtype=getattr(torch, dtype), generator=generator)
        made.append(x)
    views = [x if layout == "bnhd" else x.transpose(1, 2) for x in made]
    return made, views


def check_output(torch, o, o_pt, o_ref, dtype):
    """FlashAttention-2's gate with a float64 reference: the error is at most twice
    PyTorch's in the same dtype, plus the rounding of o to @p dtype."""
    err = (o.double() - o_ref).abs().max().item()
    err_pt = (o_pt.double() - o_ref).abs().max().item()
    noise = UNIT_ROUNDOFF[dtype] * o_ref.abs().max().item()
    assert err <= 2 * err_pt + noise, (
        "max |o - ref64| = %.3g > 2 x %.3g (torch %s) + %.3g" % (err, err_pt, dtype, noise))


def run_and_check(torch, nq, nk, heads_kv, d, dtype, layout, variant="auto", seed=0):
    (q, k, v), (qv, kv, vv) = inputs(torch, nq, nk, heads_kv, d, dtype, layout, seed)
    o, lse = flashattn.forward(q, k, v, layout=layout, variant=variant, return_lse=True)
    torch.cuda.synchronize()
    assert o.shape == q.shape and o.dtype == q.dtype
    assert lse.shape == (BATCH, HEADS_Q, nq) and lse.dtype == torch.float32
    ov = o if layout == "bnhd" else o.transpose(1, 2)
    scale = 1.0 / math.sqrt(d)
    o_ref = reference(torch, qv, kv, vv, torch.float64, scale)
    o_pt = reference(torch, qv, kv, vv, getattr(torch, dtype), scale)
    check_output(torch, ov, o_pt, o_ref, dtype)
    lse_err = (lse.double() - reference_lse(torch, qv, kv, scale)).abs().max().item()
    assert lse_err <= LSE_TOLERANCE, "max |lse - ref64| = %.3g" % lse_err


def fa2_grid(head_dims):
    """FlashAttention-2's grid over @p head_dims: seqlens x dtypes x MHA/GQA/MQA x layouts."""
    def parametrize(test):
        for name, values, ids in [("d", head_dims, None),
                                  ("seqlens", SEQLENS, lambda s: "%dx%d" % s),
                                  ("dtype", ["bfloat16", "float16"], None),
                                  ("mha_type", list(HEADS_KV), None),
                                  ("layout", ["bnhd", "bhnd"], None)]:
            test = pytest.mark.parametrize(name, values, ids=ids)(test)
        return test
    return parametrize


@fa2_grid(HEAD_DIMS)
def test_output_fa2_grid(lib, torch, d, seqlens, dtype, mha_type, layout):
    run_and_check(torch, seqlens[0], seqlens[1], HEADS_KV[mha_type], d, dtype, layout,
                  variant="v2" if d % 8 == 0 else "v1")  # by name: "auto" would take v3


@fa2_grid([d for d in HEAD_DIMS if d % 8 == 0])
def test_output_hopper_fa2_grid(lib, torch, d, seqlens, dtype, mha_type, layout):
    """v3 asked for by name, on the grid's cases it takes (compute capability 9.0 only)."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("v3 runs on compute capability 9.0 only")
    run_and_check(torch, seqlens[0], seqlens[1], HEADS_KV[mha_type], d, dtype, layout,
                  variant="v3")


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("d", [32, 59, 128, 256])
def test_output_cuda_cores_16_bit(lib, torch, d, dtype):
    run_and_check(torch, 113, 203, 2, d, dtype, "bnhd", variant="v1")


@pytest.mark.parametrize("layout", ["bnhd", "bhnd"])
@pytest.mark.parametrize("d", [1, 32, 59, 128, 256])
def test_output_fp32(lib, torch, d, layout):
    """v1 in fp32: exp2 and a reciprocal approximated to about 2^-22 and D products per
    score are a few ulps beyond PyTorch's fp32 path, which FlashAttention-2's grid (16-bit
    only) never had to cover: the gate adds 2^-16 |o| for them."""
    (q, k, v), (qv, kv, vv) = inputs(torch, 113, 203, 2, d, "float32", layout)
    o = flashattn.forward(q, k, v, layout=layout)
    ov = o if layout == "bnhd" else o.transpose(1, 2)
    scale = 1.0 / math.sqrt(d)
    o_ref = reference(torch, qv, kv, vv, torch.float64, scale)
    o_pt = reference(torch, qv, kv, vv, torch.float32, scale)
    err = (ov.double() - o_ref).abs().max().item()
    err_pt = (o_pt.double() - o_ref).abs().max().item()
    assert err <= 2 * err_pt + 2.0 ** -16 * o_ref.abs().max().item(), (err, err_pt)


def test_fp32_output_of_16_bit_inputs(lib, torch):
    (q, k, v), (qv, kv, vv) = inputs(torch, 128, 217, 2, 128, "bfloat16", "bnhd")
    out = torch.empty(q.shape, dtype=torch.float32, device="cuda")
    o = flashattn.forward(q, k, v, out=out)
    assert o is out
    scale = 1.0 / math.sqrt(128)
    check_output(torch, o, reference(torch, qv, kv, vv, torch.bfloat16, scale),
                 reference(torch, qv, kv, vv, torch.float64, scale), "bfloat16")


def test_scale(lib, torch):
    (q, k, v), (qv, kv, vv) = inputs(torch, 113, 203, 6, 64, "float16", "bnhd")
    o = flashattn.forward(q, k, v, scale=0.3)
    check_output(torch, o, reference(torch, qv, kv, vv, torch.float16, 0.3),
                 reference(torch, qv, kv, vv, torch.float64, 0.3), "float16")


# The masks against PyTorch: is_causal (top-left), causal_lower_right (bottom-right) and,
# for windows, FlashAttention-2's definition as an explicit boolean mask.
MASKS = {
    "top_left": dict(causal="top_left"),
    "bottom_right": dict(causal=True),
    "window_17_0": dict(window=(17, 0)),
    "window_5_40": dict(window=(5, 40)),
    "window_0_0": dict(window=(0, 0)),
    "window_-1_3": dict(window=(-1, 3)),
}
# (2100, 2077): past FLASH3_CAUSAL_THREE_ROWS, so v3 at rows of 64 (bf16 at d = 40: the case is
# even, head_dim_of()) runs its causal masks with three consumers.
MASK_SEQLENS = [(113, 203), (128, 217), (256, 512), (512, 256), (1, 239), (239, 1), (3, 799),
                (127, 512), (127, 513), (1024, 1023), (2100, 2077)]


def allowed_keys(torch, nq, nk, kwargs):
    """[nq, nk] booleans: the keys each row sees, by FlashAttention-2's definition."""
    i = torch.arange(nq, device="cuda")[:, None]
    j = torch.arange(nk, device="cuda")[None, :]
    if kwargs.get("causal") == "top_left":
        return j <= i
    left, right = kwargs.get("window", (-1, 0))
    diagonal = i + nk - nq
    keep = torch.ones(nq, nk, dtype=torch.bool, device="cuda")
    if left >= 0:
        keep &= j >= diagonal - left
    if right >= 0:
        keep &= j <= diagonal + right
    return keep


def masked_reference(torch, q, k, v, dtype, scale, kwargs):
    """o of PyTorch's math path under the mask, in @p dtype, for [B, N, H, D] views; rows
    with no key (NaN in PyTorch) set to 0, as the library defines them."""
    group = q.shape[2] // k.shape[2]
    k = k.repeat_interleave(group, dim=2)
    v = v.repeat_interleave(group, dim=2)
    qt, kt, vt = (t.to(dtype).transpose(1, 2) for t in (q, k, v))
    nq, nk = q.shape[1], k.shape[1]
    mask_args = {"attn_mask": allowed_keys(torch, nq, nk, kwargs)}
    if kwargs.get("causal") == "top_left":
        mask_args = {"is_causal": True}
    elif kwargs.get("causal") is True:
        try:
            from torch.nn.attention.bias import causal_lower_right
            mask_args = {"attn_mask": causal_lower_right(nq, nk)}
        except ImportError:
            pass
    with math_sdpa(torch):
        o = torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, scale=scale,
                                                             **mask_args)
    empty = ~allowed_keys(torch, nq, nk, kwargs).any(dim=1)
    o[:, :, empty, :] = 0
    return o.transpose(1, 2)


# v3's head dims for masks and packed batches, per dtype: a case takes them in turn, so
# that rows of 64 and 192 (bf16) and of 128 and 256 (fp16) each meet every mask.
V3_HEAD_DIMS = {"bfloat16": (40, 136), "float16": (96, 200)}


def head_dim_of(variant, dtype, case):
    """The head dim test @p case (a count) of masks or packed batches runs @p variant at:
    one v2 does not take for v1; for v3 those of V3_HEAD_DIMS in turn, padded to each of
    its row widths (keys of 128 a tile up to 128, of 64 past it)."""
    if variant == "v3":
        dims = V3_HEAD_DIMS[dtype]
        return dims[case % len(dims)]
    return {"v1": 40, "v2": 64}[variant]


def skip_unless_v3_runs(torch, variant):
    if variant == "v3" and torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("v3 runs on compute capability 9.0 only")


@pytest.mark.parametrize("variant", ["v1", "v2", "v3"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("seqlens", MASK_SEQLENS, ids=lambda s: "%dx%d" % s)
@pytest.mark.parametrize("mask", list(MASKS))
def test_masks(lib, torch, mask, seqlens, dtype, variant):
    skip_unless_v3_runs(torch, variant)
    nq, nk = seqlens
    kwargs = MASKS[mask]
    d = head_dim_of(variant, dtype, MASK_SEQLENS.index(seqlens))
    (q, k, v), _ = inputs(torch, nq, nk, 2, d, dtype, "bnhd", seed=nq + nk)
    o, lse = flashattn.forward(q, k, v, variant=variant, return_lse=True, **kwargs)
    torch.cuda.synchronize()
    scale = 1.0 / math.sqrt(d)
    o_ref = masked_reference(torch, q, k, v, torch.float64, scale, kwargs)
    o_pt = masked_reference(torch, q, k, v, getattr(torch, dtype), scale, kwargs)
    check_output(torch, o, o_pt, o_ref, dtype)
    keep = allowed_keys(torch, nq, nk, kwargs)
    kk = k.repeat_interleave(HEADS_Q // 2, dim=2)
    scores = torch.einsum("bqhd,bkhd->bhqk", q.double(), kk.double()) * scale
    lse_ref = torch.logsumexp(scores.masked_fill(~keep, -math.inf), dim=-1)
    empty = ~keep.any(dim=1)
    assert torch.all(lse[:, :, empty] == -math.inf)
    assert torch.all(o[:, empty] == 0)
    if (~empty).any():
        lse_err = (lse[:, :, ~empty].double() - lse_ref[:, :, ~empty]).abs().max().item()
        assert lse_err <= LSE_TOLERANCE, "max |lse - ref64| = %.3g" % lse_err


# A packed batch: (rows, keys) per sequence; empty, keyless, tails on both sides of the tiles.
PACKED_LENGTHS = [(0, 0), (1, 1), (127, 127), (128, 128), (129, 129), (64, 0), (5, 300),
                  (300, 5), (700, 1000)]
PACKED_MASKS = ["none"] + list(MASKS)


@pytest.mark.parametrize("variant", ["v1", "v2", "v3"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("mask", PACKED_MASKS)
def test_packed(lib, torch, mask, dtype, variant):
    """Each sequence of a packed batch against PyTorch's math path on it alone (its mask
    aligned to its lengths), and bit for bit against forward() on it alone; values of
    a different range in each sequence."""
    skip_unless_v3_runs(torch, variant)
    kwargs = MASKS.get(mask, {})
    d, heads_kv = head_dim_of(variant, dtype, PACKED_MASKS.index(mask)), 2
    generator = torch.Generator(device="cuda").manual_seed(len(mask))
    tdtype = getattr(torch, dtype)
    seqs = []
    for s, (nq, nk) in enumerate(PACKED_LENGTHS):
        q = torch.randn(nq, HEADS_Q, d, device="cuda", generator=generator)
        k = torch.randn(nk, heads_kv, d, device="cuda", generator=generator)
        v = torch.randn(nk, heads_kv, d, device="cuda", generator=generator) * (s + 1) + 10 * s
        seqs.append([x.to(tdtype) for x in (q, k, v)])
    cu_q = torch.tensor([0] + [sum(n for n, _ in PACKED_LENGTHS[:i + 1])
                               for i in range(len(PACKED_LENGTHS))], dtype=torch.int32,
                        device="cuda")
    cu_k = torch.tensor([0] + [sum(n for _, n in PACKED_LENGTHS[:i + 1])
                               for i in range(len(PACKED_LENGTHS))], dtype=torch.int32,
                        device="cuda")
    q, k, v = (torch.cat([seq[i] for seq in seqs]) for i in range(3))
    o, lse = flashattn.forward_packed(q, k, v, cu_q, cu_k, max(n for n, _ in PACKED_LENGTHS),
                                      max(n for _, n in PACKED_LENGTHS), variant=variant,
                                      return_lse=True, **kwargs)
    torch.cuda.synchronize()
    assert o.shape == q.shape and lse.shape == (HEADS_Q, q.shape[0])
    scale = 1.0 / math.sqrt(d)
    for s, (nq, nk) in enumerate(PACKED_LENGTHS):
        if nq == 0:
            continue
        rows = slice(int(cu_q[s]), int(cu_q[s + 1]))
        qs, ks, vs = (x.unsqueeze(0) for x in seqs[s])
        # v3 takes no call without keys; alone, such a sequence is v2's zeros and -inf
        alone, alone_lse = flashattn.forward(qs, ks, vs, return_lse=True, **kwargs,
                                             variant="v2" if nk == 0 and variant == "v3"
                                             else variant)
        torch.cuda.synchronize()
        assert torch.equal(o[rows], alone[0]), "sequence %d differs from its run alone" % s
        assert torch.equal(lse[:, rows], alone_lse[0]), "sequence %d's lse differs" % s
        if nk == 0:
            assert torch.all(o[rows] == 0) and torch.all(lse[:, rows] == -math.inf)
            continue
        if mask == "none":
            o_ref = reference(torch, qs, ks, vs, torch.float64, scale)
            o_pt = reference(torch, qs, ks, vs, tdtype, scale)
        else:
            o_ref = masked_reference(torch, qs, ks, vs, torch.float64, scale, kwargs)
            o_pt = masked_reference(torch, qs, ks, vs, tdtype, scale, kwargs)
        check_output(torch, o[rows].unsqueeze(0), o_pt, o_ref, dtype)


@pytest.mark.parametrize("variant", ["v1", "v2", "v3"])
def test_packed_strided_views(lib, torch, variant):
    """A packed batch read through head-major views ([H, T, D] transposed: row stride D,
    head stride T D) and o written through one: the same outputs, bit for bit, as from
    contiguous [T, H, D] tensors."""
    skip_unless_v3_runs(torch, variant)
    lengths = [5, 130, 0, 64]
    cu = torch.tensor([0] + [sum(lengths[:i + 1]) for i in range(len(lengths))],
                      dtype=torch.int32, device="cuda")
    total = sum(lengths)
    generator = torch.Generator(device="cuda").manual_seed(3)

    def head_major(heads):
        x = torch.randn(heads, total, 64, device="cuda", generator=generator)
        return x.to(torch.bfloat16).transpose(0, 1)

    q, k, v = head_major(HEADS_Q), head_major(2), head_major(2)
    out = torch.empty(HEADS_Q, total, 64, device="cuda", dtype=torch.bfloat16).transpose(0, 1)
    flashattn.forward_packed(q, k, v, cu, cu, max(lengths), max(lengths), causal=True,
                             variant=variant, out=out)
    o = flashattn.forward_packed(q.contiguous(), k.contiguous(), v.contiguous(), cu, cu,
                                 max(lengths), max(lengths), causal=True, variant=variant)
    torch.cuda.synchronize()
    assert torch.equal(out, o)


def test_packed_offsets_refused(lib, torch):
    """Offsets that decrease or pass the tensors' rows: refused with the offset named."""
    q = torch.randn(6, HEADS_Q, 64, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(8, 2, 64, device="cuda", dtype=torch.bfloat16)
    good_k = torch.tensor([0, 4, 8], dtype=torch.int32, device="cuda")
    for offsets, fragment in [([0, 4, 3], "cu_seqlens_q[2] = 3 < cu_seqlens_q[1] = 4"),
                              ([0, 3, 7], "cu_seqlens_q[2] = 7 is past the tensors' nq = 6")]:
        cu_q = torch.tensor(offsets, dtype=torch.int32, device="cuda")
        with pytest.raises(flashattn.Error) as caught:
            flashattn.forward_packed(q, k, k, cu_q, good_k, 6, 4)
        assert caught.value.name == "FA_ERR_INVALID_ARGUMENT", str(caught.value)
        assert fragment in str(caught.value), str(caught.value)


def test_no_keys(lib, torch):
    """nk = 0: every row has no allowed key, o = 0 and lse = -inf."""
    q = torch.randn(BATCH, 300, HEADS_Q, 64, device="cuda", dtype=torch.bfloat16)
    k = torch.empty(BATCH, 0, 2, 64, device="cuda", dtype=torch.bfloat16)
    o, lse = flashattn.forward(q, k, k.clone(), return_lse=True)
    torch.cuda.synchronize()
    assert torch.equal(o, torch.zeros_like(o))
    assert torch.all(lse == -math.inf)


def test_strided_views(lib, torch):
    """q, k, v as views of one packed [B, N, 3, H, D] tensor: strides read, not assumed."""
    qkv = torch.randn(BATCH, 200, 3, HEADS_Q, 64, device="cuda", dtype=torch.bfloat16)
    q, k, v = qkv.unbind(dim=2)
    o = flashattn.forward(q, k, v)
    scale = 1.0 / math.sqrt(64)
    check_output(torch, o, reference(torch, q, k, v, torch.bfloat16, scale),
                 reference(torch, q, k, v, torch.float64, scale), "bfloat16")


def test_current_stream(lib, torch):
    (q, k, v), (qv, kv, vv) = inputs(torch, 1024, 1024, 6, 128, "bfloat16", "bnhd")
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        o = flashattn.forward(q, k, v)
        o_twice = o * 2  # queued behind the forward on the same stream
    stream.synchronize()
    scale = 1.0 / math.sqrt(128)
    check_output(torch, o_twice / 2, reference(torch, qv, kv, vv, torch.bfloat16, scale),
                 reference(torch, qv, kv, vv, torch.float64, scale), "bfloat16")


class Interface:
    """A torch tensor seen only through __cuda_array_interface__."""

    def __init__(self, tensor):
        self.tensor = tensor
        self.__cuda_array_interface__ = tensor.__cuda_array_interface__


def test_cuda_array_interface(lib, torch):
    (q, k, v), (qv, kv, vv) = inputs(torch, 113, 203, 2, 64, "float16", "bhnd")
    out = torch.empty_like(q)
    lse = torch.empty(BATCH, HEADS_Q, 113, device="cuda")
    torch.cuda.synchronize()
    o, _ = flashattn.forward(Interface(q), Interface(k), Interface(v), layout="bhnd",
                             out=Interface(out), lse=Interface(lse), return_lse=True)
    torch.cuda.synchronize()
    scale = 1.0 / math.sqrt(64)
    check_output(torch, out.transpose(1, 2), reference(torch, qv, kv, vv, torch.float16, scale),
                 reference(torch, qv, kv, vv, torch.float64, scale), "float16")
    assert (lse.double() - reference_lse(torch, qv, kv, scale)).abs().max() <= LSE_TOLERANCE


def test_bad_inputs_on_the_gpu(lib, torch):
    def t(*shape, dtype=torch.bfloat16, device="cuda"):
        return torch.randn(*shape, device=device, dtype=dtype)

    with pytest.raises(ValueError, match="on cpu"):
        flashattn.forward(t(1, 8, 2, 64, device="cpu"), t(1, 8, 2, 64), t(1, 8, 2, 64))
    with pytest.raises(ValueError, match="different dtypes"):
        flashattn.forward(t(1, 8, 2, 64), t(1, 8, 2, 64, dtype=torch.float16), t(1, 8, 2, 64))
    with pytest.raises(ValueError, match="dtype torch.float64"):
        flashattn.forward(*(t(1, 8, 2, 64, dtype=torch.float64) for _ in range(3)))
    with pytest.raises(flashattn.Error, match="head_dim = 300, expected 1..256"):
        flashattn.forward(t(1, 8, 2, 300), t(1, 8, 2, 300), t(1, 8, 2, 300))
    with pytest.raises(flashattn.Error, match="heads_q = 6 is not a multiple of heads_kv = 4"):
        flashattn.forward(t(1, 8, 6, 64), t(1, 8, 4, 64), t(1, 8, 4, 64))
    with pytest.raises(flashattn.Error, match="v2 tensor cores cannot run this call: dtype fp32"):
        x = t(1, 8, 2, 64, dtype=torch.float32)
        flashattn.forward(x, x, x, variant="v2")
    # A view one element into its storage: rows no longer start on 16 bytes.
    base = t(1 * 8 * 2 * 64 + 1)
    shifted = base[1:].view(1, 8, 2, 64)
    with pytest.raises(flashattn.Error, match="q is not 16-byte aligned at every row") as caught:
        flashattn.forward(shifted, t(1, 8, 2, 64), t(1, 8, 2, 64), variant="v2")
    assert caught.value.name == "FA_ERR_MISALIGNED"
    with pytest.raises(flashattn.Error, match="window_left = -2, window_right = 0"):
        flashattn.forward(t(1, 8, 2, 64), t(1, 8, 2, 64), t(1, 8, 2, 64), window=(-2, 0))
