"""Reads a needle-nano GGUF (as export_gguf.py writes it) back into a training state, so that a run
can resume from a shipped model itself (train.py --init FILE.gguf): the shape from the llama.*
metadata, every tensor as float32 (F32, F16 or Q8_0; Q8_0 comes back as its rounded values), and
the counters of sinkscope.training.* (zero when absent). There is no optimizer state: the
resumed run warms a fresh AdamW up again, as it does from the repository's fp16 weights.

The format is the one export_gguf.py's docstring describes; value types are GGUF's
(0 u8, 1 i8, 2 u16, 3 i16, 4 u32, 5 i32, 6 f32, 7 bool, 8 string, 9 array, 10 u64, 11 i64,
12 f64).
"""

import struct

import numpy as np
import torch

from export_gguf import (GGML_F16, GGML_F32, GGML_Q8_0, T_ARRAY, T_STRING, q8_0_values,
                         tensor_names)
from model import Config

SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<B", 10: "<Q",
           11: "<q", 12: "<d"}


class Reader:
    def __init__(self, data):
        self.data, self.at = data, 0

    def take(self, fmt):
        (value,) = struct.unpack_from(fmt, self.data, self.at)
        self.at += struct.calcsize(fmt)
        return value

    def string(self):
        n = self.take("<Q")
        self.at += n
        return self.data[self.at - n:self.at].decode("utf-8")

    def value(self, vtype):
        if vtype == T_STRING:
            return self.string()
        if vtype == T_ARRAY:
            etype, count = self.take("<I"), self.take("<Q")
            return [self.value(etype) for _ in range(count)]
        if vtype not in SCALARS:
            raise ValueError("unknown GGUF value type %d" % vtype)
        return self.take(SCALARS[vtype])


def tensor_values(raw, ggml_type, shape):
    count = int(np.prod(shape))
    if ggml_type == GGML_F32:
        values = np.frombuffer(raw, dtype="<f4", count=count)
    elif ggml_type == GGML_F16:
        values = np.frombuffer(raw, dtype="<f2", count=count).astype(np.float32)
    elif ggml_type == GGML_Q8_0:
        values = q8_0_values(raw, count)
    else:
        raise ValueError("needle-nano's tensors are F32, F16 or Q8_0, not ggml type %d" % ggml_type)
    return values.reshape(shape)


def load_state(path):
    """The GGUF at `path` as a state dict like train.py's (config, model, counters)."""
    with open(path, "rb") as f:
        data = f.read()
    r = Reader(data)
    if data[:4] != b"GGUF":
        raise ValueError("%s is not a GGUF file" % path)
    r.at = 4
    version, n_tensors, n_kv = r.take("<I"), r.take("<Q"), r.take("<Q")
    if version != 3:
        raise ValueError("%s: GGUF version %d, expected 3" % (path, version))
    meta = {}
    for _ in range(n_kv):
        key = r.string()
        meta[key] = r.value(r.take("<I"))
    infos = {}
    for _ in range(n_tensors):
        name = r.string()
        dims = [r.take("<Q") for _ in range(r.take("<I"))]
        infos[name] = (list(reversed(dims)), r.take("<I"), r.take("<Q"))  # shape, type, offset
    alignment = meta.get("general.alignment", 32)
    base = (r.at + alignment - 1) // alignment * alignment
    config = Config(vocab=meta["llama.vocab_size"], d=meta["llama.embedding_length"],
                    n_layer=meta["llama.block_count"],
                    n_head=meta["llama.attention.head_count"],
                    n_kv=meta["llama.attention.head_count_kv"],
                    ff=meta["llama.feed_forward_length"], rope_base=meta["llama.rope.freq_base"],
                    eps=meta["llama.attention.layer_norm_rms_epsilon"],
                    ctx=meta["llama.context_length"])
    model = {}
    for gguf_name, torch_name in tensor_names(config.n_layer):
        shape, ggml_type, offset = infos[gguf_name]
        values = tensor_values(memoryview(data)[base + offset:], ggml_type, shape)
        model[torch_name] = torch.from_numpy(values.copy())
    return {"config": config.to_dict(), "model": model,
            "step": meta.get("sinkscope.training.steps", 0),
            "tokens_seen": meta.get("sinkscope.training.tokens", 0),
            "train_seconds": meta.get("sinkscope.training.seconds", 0.0), "decayed": False}
