"""Attention Cells: nn.TransformerEncoderLayer / DecoderLayer, nn.TransformerEncoder / Decoder and
nn.Transformer, as MindSpore 2.10 builds them; nn.MultiheadAttention lives in
multihead_attention.py and is re-exported here.

MindSpore's structure, which these follow (names matter: checkpoints address them):
- the layers hold self_attn (and multihead_attn in the decoder), dense1 -> activation -> dropout
  -> dense2 as the feed-forward block, norm1/norm2 (norm3), dropout1/dropout2 (dropout3), every
  Dropout with the layer's dropout (the attention's own dropout too);
- post-norm by default (x = norm(x + block(x))), pre-norm with norm_first
  (x = x + block(norm(x)));
- activation is 'relu' / 'gelu' or ops.relu / ops.gelu (gelu without the tanh approximation).
  MindSpore 2.10 refuses every other value, nn.ReLU() and nn.GELU() instances too, and so do
  these;
- TransformerEncoder/Decoder build a fresh layer from the given layer's settings (the given
  layer's own parameters are not used) and deep-copy it num_layers times into `layers`, so every
  layer starts with the same weights; `norm` (optional) follows the last layer;
- Transformer re-initialises every parameter of rank > 1 with xavier_uniform after building its
  encoder and decoder (each with a final LayerNorm)."""
from __future__ import annotations

import copy
import math
import numbers

from ...common.initializer import HeUniform, Uniform, initializer
from ...core import dtype as dt
from ...core.arg_checks import check_bool
from ..cell import Cell, CellList
from .basic import Dense, check_positive_int
from .multihead_attention import MultiheadAttention, check_dropout
from .normalization import Dropout, LayerNorm

__all__ = ["MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer",
           "TransformerEncoder", "TransformerDecoder", "Transformer"]


def _activation(who: str, activation):
    """MindSpore 2.10's accepted activations: 'relu', 'gelu', ops.relu, ops.gelu."""
    from ... import ops
    if isinstance(activation, str):
        if activation == "relu":
            return ops.relu
        if activation == "gelu":
            return ops.gelu
        raise ValueError(f"{who}: activation must be 'relu' or 'gelu', got {activation!r}")
    if activation is ops.relu or activation is ops.gelu:
        return activation
    raise ValueError(f"{who}: activation must be 'relu', 'gelu', ops.relu or ops.gelu, got "
                     f"{activation!r} (MindSpore 2.10 refuses nn.ReLU() / nn.GELU() instances "
                     f"and other callables here too)")


def _check_float(who: str, name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value > 0:
        raise ValueError(f"{who}: {name} must be a positive float, got {value!r}")
    return float(value)


def _check_kpm_dtype(who: str, mask) -> None:
    if mask is not None and mask.dtype is not dt.bool_ and not mask.dtype.is_float:
        raise AssertionError(f"{who}: src_key_padding_mask must be bool or float, got "
                             f"{mask.dtype}; pass a bool mask (True = padding)")


def _dense(who, n_in, n_out, dtype):
    """MindSpore's feed-forward Dense: HeUniform(sqrt(5)) weight, Uniform(1/sqrt(n_in)) bias."""
    return Dense(n_in, n_out, weight_init=HeUniform(math.sqrt(5)),
                 bias_init=Uniform(1 / math.sqrt(n_in)), dtype=dtype)


class _LayerBase(Cell):
    """The settings and the feed-forward block both layers share."""

    who = ""

    def _setup(self, d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
               batch_first, norm_first, dtype):
        who = self.who
        self.d_model = check_positive_int(who, "d_model", d_model)
        self.nhead = check_positive_int(who, "nhead", nhead)
        self.dim_feedforward = check_positive_int(who, "dim_feedforward", dim_feedforward)
        self.dropout_num = check_dropout(who, dropout)
        self.layernorm_eps = _check_float(who, "layer_norm_eps", layer_norm_eps)
        self.batch_first = check_bool(who, "batch_first", batch_first)
        self.norm_first = check_bool(who, "norm_first", norm_first)
        self.dtype = dt.float32 if dtype is None else dt.to_dtype(dtype)
        self.activation1 = activation           # as given: what Encoder/Decoder rebuild from
        fn = _activation(who, activation)
        return fn

    def _ff_parts(self, n_norms: int):
        d, ff, p, dtype = self.d_model, self.dim_feedforward, self.dropout_num, self.dtype
        self.dense1 = _dense(self.who, d, ff, dtype)
        self.dropout = Dropout(p=p)
        self.dense2 = _dense(self.who, ff, d, dtype)
        for i in range(1, n_norms + 1):
            setattr(self, f"norm{i}", LayerNorm((d,), epsilon=self.layernorm_eps, dtype=dtype))
        for i in range(1, n_norms + 1):
            setattr(self, f"dropout{i}", Dropout(p=p))

    def _attn(self):
        return MultiheadAttention(self.d_model, self.nhead, dropout=self.dropout_num,
                                  batch_first=self.batch_first, dtype=self.dtype)

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _ff_block(self, x, last_dropout):
        return last_dropout(self.dense2(self.dropout(self.activation(self.dense1(x)))))

    def _settings(self):
        return (self.d_model, self.nhead, self.dim_feedforward, self.dropout_num,
                self.activation1, self.layernorm_eps, self.batch_first, self.norm_first)


class TransformerEncoderLayer(_LayerBase):
    """Self-attention and a feed-forward block (MindSpore 2.x nn.TransformerEncoderLayer).
    construct(src, src_mask=None, src_key_padding_mask=None); masks as nn.MultiheadAttention."""

    who = "TransformerEncoderLayer"

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation="relu", layer_norm_eps: float = 1e-05,
                 batch_first: bool = False, norm_first: bool = False, dtype=dt.float32):
        super().__init__()
        fn = self._setup(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                         batch_first, norm_first, dtype)
        self.self_attn = self._attn()
        self._ff_parts(2)
        self.activation = fn

    def construct(self, src, src_mask=None, src_key_padding_mask=None):
        _check_kpm_dtype(self.who, src_key_padding_mask)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask)
            return x + self._ff_block(self.norm2(x), self.dropout2)
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask))
        return self.norm2(x + self._ff_block(x, self.dropout2))


class TransformerDecoderLayer(_LayerBase):
    """Self-attention, attention over the encoder's memory and a feed-forward block (MindSpore
    2.x nn.TransformerDecoderLayer). construct(tgt, memory, tgt_mask=None, memory_mask=None,
    tgt_key_padding_mask=None, memory_key_padding_mask=None)."""

    who = "TransformerDecoderLayer"

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation="relu", layer_norm_eps: float = 1e-05,
                 batch_first: bool = False, norm_first: bool = False, dtype=dt.float32):
        super().__init__()
        fn = self._setup(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                         batch_first, norm_first, dtype)
        self.self_attn = self._attn()
        self.multihead_attn = self._attn()
        self._ff_parts(3)
        self.activation = fn

    def construct(self, tgt, memory, tgt_mask=None, memory_mask=None,
                  tgt_key_padding_mask=None, memory_key_padding_mask=None):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask)
            return x + self._ff_block(self.norm3(x), self.dropout3)
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask))
        return self.norm3(x + self._ff_block(x, self.dropout3))

    def _mha_block(self, x, mem, attn_mask, key_padding_mask):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, need_weights=False)[0]
        return self.dropout2(x)


def _stack(who: str, layer, cls, num_layers, norm):
    if not isinstance(layer, cls):
        raise TypeError(f"{who}: the first argument must be an nn.{cls.__name__}, got "
                        f"{type(layer).__name__}")
    if isinstance(num_layers, bool) or not isinstance(num_layers, numbers.Integral) or \
            num_layers < 0:
        raise ValueError(f"{who}: num_layers must be an int >= 0, got {num_layers!r}")
    if norm is not None and not isinstance(norm, Cell):
        raise TypeError(f"{who}: norm must be None or a Cell (e.g. nn.LayerNorm((d_model,))), "
                        f"got {type(norm).__name__}")
    fresh = cls(*layer._settings(), dtype=layer.dtype)
    return CellList([copy.deepcopy(fresh) for _ in range(int(num_layers))])


class TransformerEncoder(Cell):
    """num_layers copies of an encoder layer, then `norm` (MindSpore 2.x nn.TransformerEncoder).
    construct(src, src_mask=None, src_key_padding_mask=None)."""

    def __init__(self, encoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _stack("TransformerEncoder", encoder_layer, TransformerEncoderLayer,
                             num_layers, norm)
        self.num_layers = int(num_layers)
        self.norm = norm

    def construct(self, src, src_mask=None, src_key_padding_mask=None):
        _check_kpm_dtype("TransformerEncoder", src_key_padding_mask)
        out = src
        for layer in self.layers:
            out = layer(out, src_mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            out = self.norm(out)
        return out


class TransformerDecoder(Cell):
    """num_layers copies of a decoder layer, then `norm` (MindSpore 2.x nn.TransformerDecoder).
    construct(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None)."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _stack("TransformerDecoder", decoder_layer, TransformerDecoderLayer,
                             num_layers, norm)
        self.num_layers = int(num_layers)
        self.norm = norm

    def construct(self, tgt, memory, tgt_mask=None, memory_mask=None,
                  tgt_key_padding_mask=None, memory_key_padding_mask=None):
        out = tgt
        for layer in self.layers:
            out = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                        tgt_key_padding_mask=tgt_key_padding_mask,
                        memory_key_padding_mask=memory_key_padding_mask)
        if self.norm is not None:
            out = self.norm(out)
        return out


class Transformer(Cell):
    """An encoder and a decoder (MindSpore 2.x nn.Transformer). construct(src, tgt, src_mask=None,
    tgt_mask=None, memory_mask=None, src_key_padding_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None)."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation="relu", custom_encoder=None, custom_decoder=None,
                 layer_norm_eps: float = 1e-05, batch_first: bool = False,
                 norm_first: bool = False, dtype=dt.float32):
        super().__init__()
        settings = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                    batch_first, norm_first)
        for name, c in (("custom_encoder", custom_encoder), ("custom_decoder", custom_decoder)):
            if c is not None and not isinstance(c, Cell):
                raise TypeError(f"Transformer: {name} must be None or a Cell, got "
                                f"{type(c).__name__}")
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(*settings, dtype=dtype)
            norm = LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(*settings, dtype=dtype)
            norm = LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)
        for _, p in self.parameters_and_names():
            if len(p.shape) > 1:
                p.set_data(initializer("xavier_uniform", p.shape, p.dtype))
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def construct(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                  src_key_padding_mask=None, tgt_key_padding_mask=None,
                  memory_key_padding_mask=None):
        if len(src.shape) == 3:
            axis = 0 if self.batch_first else 1
            if src.shape[axis] != tgt.shape[axis]:
                raise ValueError(f"Transformer: src and tgt must have one batch size, got "
                                 f"{src.shape[axis]} and {tgt.shape[axis]} (axis {axis})")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ValueError(f"Transformer: src and tgt must have d_model={self.d_model} "
                             f"features in the last dim, got {src.shape[-1]} and "
                             f"{tgt.shape[-1]}")
        memory = self.encoder(src, src_mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask)
