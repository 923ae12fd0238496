"""Writes a needle-nano checkpoint as a GGUF v3 file of architecture `llama`.

Layout (little-endian): u32 magic "GGUF", u32 version 3, u64 n_tensors, u64 n_kv; n_kv x
{string key, u32 value type, value}; n_tensors x {string name, u32 n_dims, n_dims x u64 ne
(fastest first), u32 ggml type, u64 offset into the data section}; padding to the alignment (32);
the data, each tensor at an offset that is a multiple of 32. A string is u64 length + bytes; an
array is u32 element type, u64 count, elements.

A PyTorch Linear weight [out][in] is stored row-major, which is GGUF's ne = {in, out}: the bytes
are written as they are. The model rotates adjacent pairs, as llama.cpp's `llama` does, so Q and
K need no permutation.

Weight types: F32, F16, or Q8_0 (ggml's block of 32: an f16 scale d = max|x| / 127, then 32
int8 values round(x / d), rounded half away from zero; 34 bytes). Norm vectors stay F32.

  python3 export_gguf.py --work-dir DIR [--checkpoint latest.pt] [--type q8_0] --out needle-nano.gguf
"""

import argparse
import os
import struct

import numpy as np
import blas_setup  # noqa: F401  (before torch: OpenBLAS picks its kernels as it loads)
import torch

from spm_tokenizer import BOS, UNK, Tokenizer

ALIGNMENT = 32
T_UINT32, T_INT32, T_FLOAT32, T_BOOL, T_STRING, T_ARRAY = 4, 5, 6, 7, 8, 9
GGML_F32, GGML_F16, GGML_Q8_0 = 0, 1, 8
# general.file_type (llama.cpp's LLAMA_FTYPE_*) and the matrices' ggml type, per --type
WEIGHT_TYPES = {"f32": (0, GGML_F32), "f16": (1, GGML_F16), "q8_0": (7, GGML_Q8_0)}
Q8_0_BLOCK = 32
Q8_0_RECORD = np.dtype([("d", "<f2"), ("qs", "i1", Q8_0_BLOCK)])  # one block: 34 bytes


def quantize_q8_0(array):
    """Rows of a [rows, cols] matrix (cols a multiple of 32) as ggml's Q8_0 blocks, in bytes."""
    blocks = np.ascontiguousarray(array, dtype=np.float32).reshape(-1, Q8_0_BLOCK)
    d = np.abs(blocks).max(axis=1, keepdims=True) / 127
    inverse = np.divide(1.0, d, out=np.zeros_like(d), where=d > 0).astype(np.float32)
    scaled = blocks * inverse
    q = (np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)).astype(np.int8)
    out = np.empty(len(blocks), dtype=Q8_0_RECORD)
    out["d"], out["qs"] = d[:, 0].astype(np.float16), q
    return out.tobytes()


def q8_0_values(raw, count):
    """The first `count` values that Q8_0 bytes hold, as float32 (count a multiple of 32)."""
    blocks = np.frombuffer(raw, dtype=Q8_0_RECORD, count=count // Q8_0_BLOCK)
    return (blocks["d"].astype(np.float32)[:, None] * blocks["qs"]).reshape(-1)


def dequantize_q8_0(array):
    """What a Q8_0 matrix holds, as float32 of the same shape (for references computed from the
    exported weights)."""
    return q8_0_values(quantize_q8_0(array), np.size(array)).reshape(np.shape(array))


def round_trip(model, weight_type):
    """Sets the model's matrices to what the export of that type holds (F16 or Q8_0 rounding), so
    that PyTorch's logits are those of the exported file's weights."""
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() != 2 or weight_type == "f32":
                continue
            w = p.detach().cpu().numpy()
            held = dequantize_q8_0(w) if weight_type == "q8_0" else w.astype(np.float16)
            p.copy_(torch.from_numpy(np.asarray(held, dtype=np.float32)))


class GgufWriter:
    def __init__(self):
        self.kv = []  # encoded key-value records
        self.tensors = []  # (name, array, ggml type)

    @staticmethod
    def _string(text):
        data = text.encode("utf-8")
        return struct.pack("<Q", len(data)) + data

    def _value(self, vtype, value):
        if vtype == T_STRING:
            return self._string(value)
        if vtype == T_BOOL:
            return struct.pack("<B", 1 if value else 0)
        return struct.pack({T_UINT32: "<I", T_INT32: "<i", T_FLOAT32: "<f"}[vtype], value)

    def add(self, key, vtype, value):
        self.kv.append(self._string(key) + struct.pack("<I", vtype) + self._value(vtype, value))

    def add_array(self, key, etype, values):
        body = b"".join(self._value(etype, v) for v in values)
        self.kv.append(self._string(key) + struct.pack("<IIQ", T_ARRAY, etype, len(values)) + body)

    def add_tensor(self, name, array, ggml_type):
        if ggml_type == GGML_Q8_0:
            data = quantize_q8_0(array)
        else:
            dtype = np.float16 if ggml_type == GGML_F16 else np.float32
            data = np.ascontiguousarray(array, dtype=dtype).tobytes()
        self.tensors.append((name, np.shape(array), data, ggml_type))

    def write(self, path):
        infos, offset = [], 0
        for name, shape, data, ggml_type in self.tensors:
            dims = list(reversed(shape))  # ne: fastest-varying first
            infos.append(self._string(name) + struct.pack("<I", len(dims)) +
                         b"".join(struct.pack("<Q", d) for d in dims) +
                         struct.pack("<IQ", ggml_type, offset))
            offset += (len(data) + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
        header = b"GGUF" + struct.pack("<IQQ", 3, len(self.tensors), len(self.kv))
        header += b"".join(self.kv) + b"".join(infos)
        header += b"\0" * ((-len(header)) % ALIGNMENT)
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(header)
            for _, _, data, _ in self.tensors:
                f.write(data + b"\0" * ((-len(data)) % ALIGNMENT))
        os.replace(tmp, path)


# GGUF's tensor names (llama.cpp's `llama`) and the model's (model.py), per layer and global.
LAYER_TENSORS = [("attn_norm", "attn_norm"), ("attn_q", "attn.wq"), ("attn_k", "attn.wk"),
                 ("attn_v", "attn.wv"), ("attn_output", "attn.wo"), ("ffn_norm", "ffn_norm"),
                 ("ffn_gate", "w_gate"), ("ffn_up", "w_up"), ("ffn_down", "w_down")]


def tensor_names(n_layer):
    """(GGUF name, state-dict name) of every tensor, in the file's order."""
    names = [("token_embd.weight", "embed.weight")]
    for i in range(n_layer):
        names += [("blk.%d.%s.weight" % (i, g), "blocks.%d.%s.weight" % (i, t))
                  for g, t in LAYER_TENSORS]
    return names + [("output_norm.weight", "norm.weight")]


def export(state, tok, path, kv_window, weight_type):
    c = state["config"]
    sd = {k: v.float().numpy() for k, v in state["model"].items()}
    w = GgufWriter()
    w.add("general.architecture", T_STRING, "llama")
    w.add("general.name", T_STRING, "needle-nano")
    w.add("general.alignment", T_UINT32, ALIGNMENT)
    file_type, matrix = WEIGHT_TYPES[weight_type]
    w.add("general.file_type", T_UINT32, file_type)
    w.add("llama.context_length", T_UINT32, c["ctx"])
    w.add("llama.embedding_length", T_UINT32, c["d"])
    w.add("llama.block_count", T_UINT32, c["n_layer"])
    w.add("llama.feed_forward_length", T_UINT32, c["ff"])
    w.add("llama.attention.head_count", T_UINT32, c["n_head"])
    w.add("llama.attention.head_count_kv", T_UINT32, c["n_kv"])
    w.add("llama.attention.layer_norm_rms_epsilon", T_FLOAT32, c["eps"])
    w.add("llama.rope.freq_base", T_FLOAT32, c["rope_base"])
    w.add("llama.rope.dimension_count", T_UINT32, c["d"] // c["n_head"])
    w.add("llama.vocab_size", T_UINT32, tok.size)
    w.add("tokenizer.ggml.model", T_STRING, "llama")
    w.add_array("tokenizer.ggml.tokens", T_STRING, tok.pieces)
    w.add_array("tokenizer.ggml.scores", T_FLOAT32, tok.scores)
    w.add_array("tokenizer.ggml.token_type", T_INT32, tok.types)
    w.add("tokenizer.ggml.bos_token_id", T_UINT32, BOS)
    # Generation ends at the end of the assistant's turn: <|im_end|> is the EOS (and EOT) token,
    # so Sinkscope's session and llama.cpp stop there. </s> stays in the vocabulary, unused.
    w.add("tokenizer.ggml.eos_token_id", T_UINT32, tok.id("<|im_end|>"))
    w.add("tokenizer.ggml.eot_token_id", T_UINT32, tok.id("<|im_end|>"))
    w.add("tokenizer.ggml.unknown_token_id", T_UINT32, UNK)
    w.add("tokenizer.ggml.add_bos_token", T_BOOL, True)
    w.add("tokenizer.ggml.add_eos_token", T_BOOL, False)
    w.add("tokenizer.ggml.add_space_prefix", T_BOOL, True)
    w.add("sinkscope.kv_window", T_UINT32, kv_window)
    w.add("sinkscope.position_mode", T_STRING, "streaming")
    # What a run resuming from this file (train.py --init FILE.gguf) continues from.
    w.add("sinkscope.training.steps", T_UINT32, state["step"])
    w.add("sinkscope.training.tokens", T_UINT32, state["tokens_seen"])
    w.add("sinkscope.training.seconds", T_FLOAT32, state["train_seconds"])

    for gguf_name, torch_name in tensor_names(c["n_layer"]):
        w.add_tensor(gguf_name, sd[torch_name], matrix if sd[torch_name].ndim == 2 else GGML_F32)
    w.write(path)
    return os.path.getsize(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--checkpoint", default="latest.pt")
    ap.add_argument("--out", required=True)
    ap.add_argument("--kv-window", type=int, default=96)
    ap.add_argument("--type", default="f32", choices=sorted(WEIGHT_TYPES),
                    help="the matrices' weight type (norms stay F32)")
    args = ap.parse_args()
    state = torch.load(os.path.join(args.work_dir, args.checkpoint), map_location="cpu")
    tok = Tokenizer.load(os.path.join(args.work_dir, "tokenizer.json"))
    size = export(state, tok, args.out, args.kv_window, args.type)
    print("wrote %s (%d bytes, step %d)" % (args.out, size, state["step"]))


if __name__ == "__main__":
    main()
