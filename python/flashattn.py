"""The attention forward of stages 06 and 07 (06_fused_flash, 07_causal) from Python.

A ctypes binding over libflashattn.so, with no build step of its own::

    import flashattn
    o = flashattn.forward(q, k, v)                       # q [B, Nq, Hq, D], k, v [B, Nk, Hkv, D]
    o, lse = flashattn.forward(q, k, v, layout="bhnd", return_lse=True)
    o = flashattn.forward(q, k, v, causal=True)          # bottom-right; "top_left": PyTorch's
    o = flashattn.forward(q, k, v, window=(256, 0))      # FlashAttention's window_size
    o = flashattn.forward_packed(q, k, v, cu_seqlens_q, cu_seqlens_k, max_q, max_k)
                                                         # q [total, Hq, D]: a packed batch

q, k and v are CUDA tensors: torch.Tensor, or any object with
``__cuda_array_interface__`` (fp32 and fp16; bf16 through torch). Their
strides are read from them (in elements), so views work as they are; only the
last dimension must be contiguous. With torch tensors the kernel is enqueued
on PyTorch's current stream of their device and o (and lse) are new torch
tensors; with other arrays, pass ``out=`` (and ``lse=``) and, if needed,
``stream=``.

The library is found at $FLASHATTN_LIBRARY when set, else next to this module,
else in the course's build folder (build/06_fused_flash/). torch is imported
only when torch tensors are given.

Errors of the library raise :class:`Error` with its message
(``fa_last_error()``): the field, its value and what is allowed.
"""

import ctypes
import operator
import os
import sys

__all__ = [
    "Error",
    "Params",
    "Strides",
    "forward",
    "forward_packed",
    "library",
    "supported",
    "supported_packed",
]

LIBRARY_NAME = "libflashattn.so"

# Values of the library's enums (fa_half.h, fa_mask.h, flashattn.h, fa_status.h).
FA_F32, FA_BF16, FA_F16 = 0, 1, 2
FA_MASK_NONE, FA_MASK_CAUSAL_TOP_LEFT, FA_MASK_CAUSAL_BOTTOM_RIGHT, FA_MASK_WINDOW = 0, 1, 2, 3
# causal=: True is FlashAttention's alignment (the last query row sees the last key).
CAUSAL = {
    False: FA_MASK_NONE,
    True: FA_MASK_CAUSAL_BOTTOM_RIGHT,
    "top_left": FA_MASK_CAUSAL_TOP_LEFT,
    "bottom_right": FA_MASK_CAUSAL_BOTTOM_RIGHT,
}
VARIANTS = {
    "auto": 0,
    "v1": 1,
    "cuda_cores": 1,
    "v2": 2,
    "tensor_cores": 2,
    "v3": 3,
    "hopper": 3,
}
FA_OK = 0


class Strides(ctypes.Structure):
    """fa_strides: element strides of the batch, row and head dimensions."""

    _fields_ = [
        ("batch", ctypes.c_int64),
        ("row", ctypes.c_int64),
        ("head", ctypes.c_int64),
    ]


class Params(ctypes.Structure):
    """fa_attention_params of flashattn.h, field by field (enums are C ints)."""

    _fields_ = [
        ("q", ctypes.c_void_p),
        ("k", ctypes.c_void_p),
        ("v", ctypes.c_void_p),
        ("o", ctypes.c_void_p),
        ("lse", ctypes.c_void_p),
        ("dtype", ctypes.c_int),
        ("o_fp32", ctypes.c_bool),
        ("batch", ctypes.c_int64),
        ("heads_q", ctypes.c_int64),
        ("heads_kv", ctypes.c_int64),
        ("nq", ctypes.c_int64),
        ("nk", ctypes.c_int64),
        ("head_dim", ctypes.c_int64),
        ("q_strides", Strides),
        ("k_strides", Strides),
        ("v_strides", Strides),
        ("o_strides", Strides),
        ("scale", ctypes.c_float),
        ("mask", ctypes.c_int),
        ("window_left", ctypes.c_int64),
        ("window_right", ctypes.c_int64),
        ("cu_seqlens_q", ctypes.c_void_p),
        ("cu_seqlens_k", ctypes.c_void_p),
        ("max_seqlen_q", ctypes.c_int64),
        ("max_seqlen_k", ctypes.c_int64),
        ("variant", ctypes.c_int),
    ]


class Error(RuntimeError):
    """A status of the library other than FA_OK, with its message."""

    def __init__(self, status, name, message):
        super().__init__("%s: %s" % (name, message))
        self.status = status
        self.name = name


_library = None


def _candidates():
    explicit = os.environ.get("FLASHATTN_LIBRARY")
    if explicit:
        return [explicit]
    here = os.path.dirname(os.path.abspath(__file__))
    return [
        os.path.join(here, LIBRARY_NAME),
        os.path.join(os.path.dirname(here), "build", "06_fused_flash", LIBRARY_NAME),
    ]


def library():
    """The loaded libflashattn (ctypes.CDLL), its functions typed and its
    fa_attention_params checked against :class:`Params`. Raises
    FileNotFoundError when it is not found (build the course with CUDA, or set
    FLASHATTN_LIBRARY), ImportError when its struct is not :class:`Params`."""
    global _library
    if _library is not None:
        return _library
    tried = _candidates()
    path = next((p for p in tried if os.path.exists(p)), None)
    if path is None:
        raise FileNotFoundError(
            "libflashattn.so not found (looked at %s): build the course with CUDA "
            "(cmake --build build) or set FLASHATTN_LIBRARY" % ", ".join(tried))
    lib = ctypes.CDLL(path)
    params = ctypes.POINTER(Params)
    for name, restype, argtypes in [
        ("fa_attention_params_size", ctypes.c_size_t, []),
        ("fa_attention_supported", ctypes.c_int, [params, ctypes.POINTER(ctypes.c_int)]),
        ("fa_attention_forward", ctypes.c_int, [params, ctypes.c_void_p]),
        ("fa_attention_variant_name", ctypes.c_char_p, [ctypes.c_int]),
        ("fa_status_name", ctypes.c_char_p, [ctypes.c_int]),
        ("fa_last_error", ctypes.c_char_p, []),
    ]:
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    size = lib.fa_attention_params_size()
    if size != ctypes.sizeof(Params):
        raise ImportError(
            "%s: sizeof(fa_attention_params) = %d, but flashattn.Params has %d bytes: "
            "flashattn.h changed without python/flashattn.py" % (path, size, ctypes.sizeof(Params)))
    _library = lib
    return lib


def _check(lib, status):
    if status != FA_OK:
        raise Error(status, lib.fa_status_name(status).decode(), lib.fa_last_error().decode())


def _torch_tensor(x):
    """True when x is a torch.Tensor (without importing torch: a tensor implies it is loaded)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


class _Tensor:
    """What the call needs of one array: pointer, shape, strides in elements, dtype."""

    def __init__(self, name, x):
        self.name = name
        self.array = x
        self.torch = _torch_tensor(x)
        if self.torch:
            import torch

            dtypes = {torch.float32: FA_F32, torch.bfloat16: FA_BF16, torch.float16: FA_F16}
            if not x.is_cuda:
                raise ValueError("%s is on %s: flashattn runs on CUDA tensors" % (name, x.device))
            if x.dtype not in dtypes:
                raise ValueError("%s has dtype %s: expected float32, bfloat16 or float16"
                                 % (name, x.dtype))
            self.dtype = dtypes[x.dtype]
            self.shape = tuple(x.shape)
            self.strides = tuple(x.stride())
            self.pointer = x.data_ptr()
            return
        interface = getattr(x, "__cuda_array_interface__", None)
        if interface is None:
            raise TypeError("%s: expected a torch.Tensor on a GPU or an object with "
                            "__cuda_array_interface__, got %s" % (name, type(x).__name__))
        typestrs = {"<f4": (FA_F32, 4), "<f2": (FA_F16, 2)}
        typestr = interface["typestr"]
        if typestr not in typestrs:
            raise ValueError("%s has typestr %r: expected '<f4' or '<f2' (bf16 through torch)"
                             % (name, typestr))
        self.dtype, itemsize = typestrs[typestr]
        self.shape = tuple(interface["shape"])
        strides = interface.get("strides")
        if strides is None:  # C-contiguous
            strides, step = [], 1
            for extent in reversed(self.shape):
                strides.insert(0, step)
                step *= extent
            self.strides = tuple(strides)
        else:
            if any(s % itemsize for s in strides):
                raise ValueError("%s: strides %s (bytes) are not multiples of the element size %d"
                                 % (name, tuple(strides), itemsize))
            self.strides = tuple(s // itemsize for s in strides)
        self.pointer = interface["data"][0] or 0
        if interface["data"][1] and name in ("out", "lse"):
            raise ValueError("%s is read-only" % name)

    def require_rank(self, rank):
        if len(self.shape) != rank:
            raise ValueError("%s has shape %s: expected %d dimensions" % (self.name, self.shape, rank))


def _axes(t, layout):
    """(batch, rows, heads, dim) and fa_strides of a 4-D tensor in @p layout, or of a
    3-D [rows, heads, dim] one in layout "packed" (batch 1, its stride unused)."""
    rank = 3 if layout == "packed" else 4
    t.require_rank(rank)
    if t.shape[-1] > 1 and t.strides[-1] != 1:
        raise ValueError("%s: the last dimension must be contiguous (stride 1), its stride is %d"
                         % (t.name, t.strides[-1]))
    if layout == "packed":
        n, h, d = t.shape
        return (1, n, h, d), Strides(0, t.strides[0], t.strides[1])
    if layout == "bnhd":
        b, n, h, d = t.shape
        strides = Strides(t.strides[0], t.strides[1], t.strides[2])
    else:
        b, h, n, d = t.shape
        strides = Strides(t.strides[0], t.strides[2], t.strides[1])
    return (b, n, h, d), strides


def _stream_handle(stream):
    """A cudaStream_t as an int: given as one, or as torch's .cuda_stream or CuPy's .ptr."""
    if stream is None:
        return None
    for attribute in ("cuda_stream", "ptr"):
        if hasattr(stream, attribute):
            return int(getattr(stream, attribute))
    return int(stream)


def _mask(causal, window):
    """(mask, window_left, window_right) of forward()'s causal= and window=."""
    try:
        mask = CAUSAL[causal]
    except (KeyError, TypeError):
        raise ValueError("causal = %r: expected False, True (bottom-right), 'top_left' or "
                         "'bottom_right'" % (causal,)) from None
    if window is None:
        return mask, 0, 0
    left, right = window
    if causal == "top_left":
        raise ValueError("window= is about the bottom-right diagonal: it takes causal=False "
                         "or True, not 'top_left'")
    if causal:
        right = 0  # FlashAttention: causal with a window keeps no key after the diagonal
    return FA_MASK_WINDOW, int(left), int(right)


def _offsets(name, x, q):
    """(pointer, count) of a packed batch's offsets: a 1-D contiguous int32 CUDA array."""
    if _torch_tensor(x):
        import torch

        if not x.is_cuda or x.dtype != torch.int32 or x.dim() != 1 or x.stride(0) != 1:
            raise ValueError("%s: expected a contiguous 1-D int32 CUDA tensor, got %s %s on %s"
                             % (name, tuple(x.shape), x.dtype, x.device))
        if _torch_tensor(q) and x.device != q.device:
            raise ValueError("%s is on %s, q on %s: expected one device" % (name, x.device,
                                                                            q.device))
        return x.data_ptr(), x.shape[0]
    interface = getattr(x, "__cuda_array_interface__", None)
    if (interface is None or interface["typestr"] != "<i4" or len(interface["shape"]) != 1
            or interface.get("strides") not in (None, (4,))):
        raise ValueError("%s: expected a contiguous 1-D int32 CUDA array" % name)
    return interface["data"][0] or 0, interface["shape"][0]


def _prepare(q, k, v, causal, window, scale, return_lse, variant, layout, out, lse, stream,
             packed=None):
    """Checks the arguments, allocates what is missing and fills the Params of the call.
    packed: (cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k) of a packed batch."""
    mask, window_left, window_right = _mask(causal, window)
    if packed is not None:
        layout = "packed"
    elif layout not in ("bnhd", "bhnd"):
        raise ValueError("layout = %r: expected 'bnhd' ([B, N, H, D]) or 'bhnd' ([B, H, N, D])"
                         % (layout,))
    if variant not in VARIANTS:
        raise ValueError("variant = %r: expected one of %s" % (variant, ", ".join(VARIANTS)))
    if scale is not None:
        scale = float(scale)
        if scale == 0.0:
            raise ValueError("scale = 0: pass scale=None for 1 / sqrt(head_dim)")

    tq, tk, tv = _Tensor("q", q), _Tensor("k", k), _Tensor("v", v)
    (batch, nq, heads_q, dim), q_strides = _axes(tq, layout)
    kv_shapes = []
    for t in (tk, tv):
        shape, strides = _axes(t, layout)
        kv_shapes.append(shape)
        t.fa_strides = strides
    if tk.shape != tv.shape:
        raise ValueError("k has shape %s, v %s: expected the same" % (tk.shape, tv.shape))
    kv_batch, nk, heads_kv, kv_dim = kv_shapes[0]
    if kv_batch != batch or kv_dim != dim:
        raise ValueError("q has shape %s, k %s (layout %s): expected the same batch and head_dim"
                         % (tq.shape, tk.shape, layout))
    if not (tq.dtype == tk.dtype == tv.dtype):
        raise ValueError("q, k and v have different dtypes")
    if not (tq.torch == tk.torch == tv.torch):
        raise TypeError("q, k and v must be all torch tensors or all other arrays")
    if tq.torch and not (q.device == k.device == v.device):
        raise ValueError("q, k and v are on %s, %s and %s: expected one device"
                         % (q.device, k.device, v.device))

    if out is None:
        if not tq.torch:
            raise ValueError("out= is required when q, k, v are not torch tensors")
        out = _empty_like_contiguous(q)
    to = _Tensor("out", out)
    _same_device(q, to)
    if to.shape != tq.shape:
        raise ValueError("out has shape %s: expected q's %s" % (to.shape, tq.shape))
    if to.dtype != tq.dtype and to.dtype != FA_F32:
        raise ValueError("out must have q's dtype or float32")
    _, o_strides = _axes(to, layout)

    tl = None
    if return_lse or lse is not None:
        # [batch, heads_q, nq]; a packed batch's [heads_q, total rows]
        lse_shape = (heads_q, nq) if packed is not None else (batch, heads_q, nq)
        if lse is None:
            if not tq.torch:
                raise ValueError("lse= is required with return_lse when q, k, v are not torch "
                                 "tensors")
            import torch

            lse = torch.empty(lse_shape, dtype=torch.float32, device=q.device)
        tl = _Tensor("lse", lse)
        _same_device(q, tl)
        tl.require_rank(len(lse_shape))
        contiguous = (heads_q * nq, nq, 1)[-len(lse_shape):]
        if (tl.dtype != FA_F32 or tl.shape != lse_shape
                or any(e > 1 and s != c for e, s, c in zip(tl.shape, tl.strides, contiguous))):
            raise ValueError("lse must be a contiguous float32 tensor of shape %s" % (lse_shape,))

    p = Params()
    p.q, p.k, p.v, p.o = tq.pointer, tk.pointer, tv.pointer, to.pointer
    p.lse = tl.pointer if tl is not None else None
    p.dtype = tq.dtype
    p.o_fp32 = to.dtype == FA_F32 and tq.dtype != FA_F32
    p.batch, p.heads_q, p.heads_kv = batch, heads_q, heads_kv
    p.nq, p.nk, p.head_dim = nq, nk, dim
    p.q_strides, p.k_strides, p.v_strides, p.o_strides = (
        q_strides, tk.fa_strides, tv.fa_strides, o_strides)
    p.scale = 0.0 if scale is None else scale
    p.mask, p.window_left, p.window_right = mask, window_left, window_right
    p.variant = VARIANTS[variant]
    if packed is not None:
        cu_q, cu_k, max_q, max_k = packed
        (p.cu_seqlens_q, count_q), (p.cu_seqlens_k, count_k) = (
            _offsets("cu_seqlens_q", cu_q, q), _offsets("cu_seqlens_k", cu_k, q))
        if count_q < 1 or count_k < 1:
            raise ValueError("cu_seqlens_q has %d offsets, cu_seqlens_k %d: expected batch + 1, "
                             "at least 1 each" % (count_q, count_k))
        if count_q != count_k:
            raise ValueError("cu_seqlens_q has %d offsets, cu_seqlens_k %d: expected the same "
                             "number, batch + 1" % (count_q, count_k))
        p.batch = count_q - 1
        p.max_seqlen_q, p.max_seqlen_k = operator.index(max_q), operator.index(max_k)

    handle = _stream_handle(stream)
    if handle is None and tq.torch:
        import torch

        handle = torch.cuda.current_stream(q.device).cuda_stream
    return p, out, lse, (handle or 0), (q.device if tq.torch else None)


def _same_device(q, t):
    if t.torch and _torch_tensor(q) and t.array.device != q.device:
        raise ValueError("%s is on %s, q on %s: expected one device" % (t.name, t.array.device,
                                                                        q.device))


def _empty_like_contiguous(x):
    import torch

    return torch.empty(x.shape, dtype=x.dtype, device=x.device)


def supported(q, k, v, *, causal=False, window=None, scale=None, return_lse=False,
              variant="auto", layout="bnhd", out=None, lse=None):
    """The kernel forward() would run for these arguments ("v1 CUDA cores",
    "v2 tensor cores" or "v3 Hopper"), from fa_attention_supported(): every
    field is validated, no memory is read (v3: the device is asked). Raises as
    forward() does."""
    return _chosen(_prepare(q, k, v, causal, window, scale, return_lse, variant, layout, out,
                            lse, None))


def supported_packed(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, *,
                     causal=False, window=None, scale=None, return_lse=False, variant="auto",
                     out=None, lse=None):
    """supported() for forward_packed()'s arguments: every field validated, no memory
    read (the offsets' contents are checked by forward_packed())."""
    return _chosen(_prepare(q, k, v, causal, window, scale, return_lse, variant, "packed", out,
                            lse, None, (cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                                        max_seqlen_k)))


def _on_device(device, call):
    """call() with @p device (a torch device, or None: the current one) current: the
    library asks the current device whether v3 runs, and launches on it."""
    if device is None:
        return call()
    import torch

    with torch.cuda.device(device):
        return call()


def _chosen(prepared):
    """The name of the variant fa_attention_supported() chooses for the prepared call,
    on its device."""
    p, device = prepared[0], prepared[4]
    lib = library()
    chosen = ctypes.c_int(0)
    _check(lib, _on_device(device, lambda: lib.fa_attention_supported(ctypes.byref(p),
                                                                      ctypes.byref(chosen))))
    return lib.fa_attention_variant_name(chosen.value).decode()


def forward(q, k, v, *, causal=False, window=None, scale=None, return_lse=False,
            variant="auto", layout="bnhd", out=None, lse=None, stream=None):
    """Attention forward: o = softmax(scale q k^T) v per (batch, head), heads_q a
    multiple of heads_kv (grouped-query attention).

    q: [B, Nq, Hq, D] (layout "bnhd", FlashAttention's) or [B, Hq, Nq, D]
    ("bhnd", PyTorch's SDPA); k, v: the same with Nk and Hkv. Any strides with
    the last dimension contiguous. dtype float32, bfloat16 or float16.

    causal: False; True or "bottom_right", FlashAttention's causal mask (key
    j <= i + Nk - Nq); "top_left", PyTorch's is_causal (j <= i). The two agree
    when Nq = Nk. window: (left, right), FlashAttention's window_size: row i
    sees keys i + Nk - Nq - left .. i + Nk - Nq + right, -1 unbounded (with
    causal=True, right is 0). A row with no key gets o = 0 and lse = -inf.
    scale: None for 1 / sqrt(D). return_lse: also return lse [B, Hq, Nq] float32 (natural
    log; -inf on rows with no key). variant: "auto" (v3 where it runs and D >= 40,
    else v2, else v1), "v1" (CUDA cores), "v2" (tensor cores) or "v3" (Hopper:
    compute capability 9.0, D a multiple of 8 up to 256, o in q's dtype). out: o's
    storage (shape of q, q's dtype or float32), allocated contiguous when None. lse:
    lse's storage. stream: a cudaStream_t (int) or an object with .cuda_stream;
    default PyTorch's current stream for torch tensors, else the legacy default stream 0.

    Returns o, or (o, lse) with return_lse.
    """
    return _run(_prepare(q, k, v, causal, window, scale, return_lse, variant, layout, out, lse,
                         stream), return_lse)


def forward_packed(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, *,
                   causal=False, window=None, scale=None, return_lse=False, variant="auto",
                   out=None, lse=None, stream=None):
    """Attention forward of a packed batch (FlashAttention's flash_attn_varlen_func):
    sequences of their own lengths one after the other, each its own attention.

    q: [total_q, Hq, D]; k, v: [total_k, Hkv, D]. cu_seqlens_q, cu_seqlens_k:
    int32 CUDA arrays of batch + 1 offsets: sequence b is rows cu_seqlens_q[b] ..
    cu_seqlens_q[b + 1] - 1 of q (and o) and keys cu_seqlens_k[b] ..
    cu_seqlens_k[b + 1] - 1 of k and v. max_seqlen_q, max_seqlen_k: ints, at
    least the longest sequence's rows and keys (ints; a bound such as the model's
    longest length is fine). causal and window apply to each sequence with its
    own lengths (bottom-right: a sequence's last row sees its last key). lse:
    [Hq, total_q]. The library reads the offsets back to check them (one
    synchronisation of the stream). Rows of o (and lse) outside every sequence
    are not written: a new o is uninitialised there. Otherwise as forward().
    """
    return _run(_prepare(q, k, v, causal, window, scale, return_lse, variant, "packed", out, lse,
                         stream, (cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k)),
                return_lse)


def _run(prepared, return_lse):
    """fa_attention_forward() on the prepared call, on its device; o, or (o, lse)."""
    p, out, lse, stream, device = prepared
    lib = library()
    _check(lib, _on_device(device, lambda: lib.fa_attention_forward(ctypes.byref(p),
                                                                    ctypes.c_void_p(stream))))
    return (out, lse) if return_lse else out

