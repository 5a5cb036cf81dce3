#!/usr/bin/python3
"""PyTorch peer of nax's benchmarks (bench/elementwise.cpp, rowops.cpp, reduce.cpp, gemm.cpp,
jit.cpp).

The C++ benchmark starts this script once (under the Python that has torch: Debian's
python3-torch runs under /usr/bin/python3) and drives it over stdin/stdout, one command per
line, one answer line per command ("ok ..." or "error ..."), so that PyTorch's runs interleave
with nax's and the other peers' in the same table. PyTorch is used as a user would: eager ops
on torch tensors it owns (it allocates its results and temporaries itself).

Commands:
  hello                         -> ok <torch version> <default thread count>
  load <name> <path> <d0> ...   -> reads float32 values (raw, native byte order) into a tensor
                                   of that shape, in memory PyTorch allocates
  param <name> <value>          -> a float scalar the ops use (a, b, c, eps)
  threads <n>                   -> torch.set_num_threads(n)
  run <op> <k>                  -> runs op k times; ok <seconds for the k calls>
  save <op> <path>              -> runs op once and writes its result (raw float32) to path
  quit
Ops: chain_plain, chain_tanh (x, a, b, c), softmax (x), layer_norm (x, gamma, beta, eps),
sum_inner, sum_outer (x: [rows, cols]); mm (a: [m, k], b: [k, n], or [batch, m, k] and
[batch, k, n]: torch.mm, torch.bmm); mlp (x: [batch, 768], w1t, b1, w2t, b2, gamma, beta,
eps: layer_norm(linear(gelu(linear(x, w1t, b1)), w2t, b2) + x)); encoder (x: [batch, seq,
model], heads as a param; ln1_g, ln1_b, wq, wk, wv [model, attn], wo [attn, model], ln2_g, ln2_b,
w1 [model, ff], b1, w2 [ff, model], b2; eps, scale: bench/transformer.cpp's block, written as a
PyTorch user writes it). Training (bench/train.cpp): mlp_train, encoder_train (a step: forward,
backward, AdamW with params lr and weight_decay) and mlp_grads, encoder_grads (the gradients,
concatenated), for the mlp (target: [batch, 768]) and encoder ops' losses. Generation (bench/generate.cpp): gpt_prefill (the first `prefill` of
`tokens` through the decoder whose weights are loaded by field path, layers.0.wq, ...; params
layers, heads, eps, scale) and gpt_decode (the token at position `context` - 1 after a cache of
the ones before it). Graphs
(bench/gnn.cpp): gnn_sum, gnn_spmm, gnn_gcn (x: [n, feat]), gnn_gat (x: [n, heads, feat],
a_src, a_dst, slope) and gnn_gat_grads (with dout), over edges src -> dst. `peak OP`: the bytes
one call of OP adds to the resident set at its peak.
"""

import ctypes
import gc
import sys
import time

import numpy as np
import torch

tensors = {}
params = {}


def blas_thread_setter():
    """Debian's torch runs its matrix products on OpenBLAS's pthread build (BLAS_INFO=generic,
    libblas.so.3 -> openblas-pthread), whose threads torch.set_num_threads does not limit: a
    "1 thread" torch.mm would run on every core. Found in the process's maps, set with torch's."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "libopenblas" in path:
                return ctypes.CDLL(path).openblas_set_num_threads
    return None


set_blas_threads = None


def blas_library():
    """The BLAS torch's products run on (Debian's libblas.so.3 alternative: OpenBLAS when
    libopenblas is installed, else the reference BLAS, many times slower), by its real path."""
    import os
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "libblas" in path or "libopenblas" in path:
                return os.path.realpath(path)
    return "none found"


def mlp_block(x, p, eps):
    """The MLP block (bench/mlp_block.hpp) with torch's [out, in] weights w1t, w2t in p."""
    F = torch.nn.functional
    h = F.linear(F.gelu(F.linear(x, p["w1t"], p["b1"])), p["w2t"], p["b2"]) + x
    return F.layer_norm(h, (x.shape[-1],), p["gamma"], p["beta"], eps)


def encoder_block(x, t, heads, eps, scale):
    """bench/transformer.cpp's encoder block (causal attention, layer norms, GELU MLP)."""
    F = torch.nn.functional
    b, s, m = x.shape
    a = F.layer_norm(x, (m,), t["ln1_g"], t["ln1_b"], eps)
    q = (a @ t["wq"]).view(b, s, heads, -1).transpose(1, 2)  # [b, heads, s, hd]
    k = (a @ t["wk"]).view(b, s, heads, -1).transpose(1, 2)
    v = (a @ t["wv"]).view(b, s, heads, -1).transpose(1, 2)
    scores = (q @ k.transpose(-1, -2)) * scale
    causal = torch.ones(s, s, dtype=torch.bool).tril()
    p = torch.softmax(scores.masked_fill(~causal, -1e9), dim=-1)
    o = (p @ v).transpose(1, 2).reshape(b, s, -1)
    h = x + o @ t["wo"]
    c = F.layer_norm(h, (m,), t["ln2_g"], t["ln2_b"], eps)
    return h + F.gelu(c @ t["w1"] + t["b1"]) @ t["w2"] + t["b2"]


def gpt2_forward(tokens, start, past):
    """bench/generate.cpp's decoder (GPT-2's blocks: pre-norm, biases, GELU's tanh form, the head
    tied to the token embedding), as a PyTorch user writes it: tokens [n] at positions
    start..start + n - 1 after `past`, each layer's (keys, values) [heads, start, hd] or None;
    the logits [n, vocab] and each layer's keys and values with the new ones (torch.cat)."""
    F = torch.nn.functional
    t = tensors
    heads, eps, scale = int(params["heads"]), params["eps"], params["scale"]
    n = tokens.shape[0]
    x = t["wte"][tokens] + t["wpe"][start:start + n]
    m = x.shape[-1]
    cache = []
    for i in range(int(params["layers"])):
        w = {k: t["layers.%d.%s" % (i, k)] for k in
             ("ln1_g", "ln1_b", "wq", "wk", "wv", "bq", "bk", "bv", "wo", "bo", "ln2_g", "ln2_b",
              "w1", "b1", "w2", "b2")}
        a = F.layer_norm(x, (m,), w["ln1_g"], w["ln1_b"], eps)
        q = (a @ w["wq"] + w["bq"]).view(n, heads, -1).transpose(0, 1)  # [heads, n, hd]
        k = (a @ w["wk"] + w["bk"]).view(n, heads, -1).transpose(0, 1)
        v = (a @ w["wv"] + w["bv"]).view(n, heads, -1).transpose(0, 1)
        if past is not None:
            k = torch.cat([past[i][0], k], dim=1)
            v = torch.cat([past[i][1], v], dim=1)
        cache.append((k, v))
        scores = (q @ k.transpose(-1, -2)) * scale  # [heads, n, start + n]
        if n > 1:
            seen = torch.ones(n, k.shape[1], dtype=torch.bool).tril(k.shape[1] - n)
            scores = scores.masked_fill(~seen, -1e9)
        o = (torch.softmax(scores, dim=-1) @ v).transpose(0, 1).reshape(n, -1)
        x = x + o @ w["wo"] + w["bo"]
        c = F.layer_norm(x, (m,), w["ln2_g"], w["ln2_b"], eps)
        x = x + F.gelu(c @ w["w1"] + w["b1"], approximate="tanh") @ w["w2"] + w["b2"]
    logits = F.layer_norm(x, (m,), t["lnf_g"], t["lnf_b"], eps) @ t["wte"].t()
    return logits, cache


past_by_context = {}


def op_function(name):
    x = tensors.get("x")
    if name == "chain_plain":
        a, b, c = params["a"], params["b"], params["c"]
        return lambda: (x * a + b) * c + x
    if name == "chain_tanh":
        a, b, c = params["a"], params["b"], params["c"]
        return lambda: torch.tanh(x * a + b) * c + x
    if name == "softmax":
        return lambda: torch.softmax(x, dim=-1)
    if name == "layer_norm":
        gamma, beta, eps = tensors["gamma"], tensors["beta"], params["eps"]
        shape = (x.shape[-1],)
        return lambda: torch.nn.functional.layer_norm(x, shape, gamma, beta, eps)
    if name == "sum_inner":
        return lambda: torch.sum(x, dim=1)
    if name == "sum_outer":
        return lambda: torch.sum(x, dim=0)
    if name == "mlp":
        # x: [batch, 768]; w1t: [3072, 768] and w2t: [768, 3072] (torch's [out, in] layout),
        # b1, b2, gamma, beta; eps.
        eps = params["eps"]
        return lambda: mlp_block(x, tensors, eps)
    if name == "proj3":
        # x: [batch, 768] times three [768, 768] weights, summed (q, k and v of attention).
        wq, wk, wv = tensors["wq"], tensors["wk"], tensors["wv"]
        return lambda: x @ wq + x @ wk + x @ wv
    if name == "encoder":
        heads, eps, scale = int(params["heads"]), params["eps"], params["scale"]
        return lambda: encoder_block(x, tensors, heads, eps, scale)
    if name in ("mlp_train", "mlp_grads"):
        # The MLP block's loss, mean over the batch of sum((y - target)^2) (target: [batch, 768]),
        # its gradients by the six weights (torch's [out, in] layout for w1t, w2t) and an AdamW
        # step (lr, weight_decay params), as a PyTorch user trains: leaf tensors that require
        # grad, zero_grad, backward, step.
        names = ["w1t", "b1", "w2t", "b2", "gamma", "beta"]
        ps = {k: tensors[k].clone().requires_grad_(True) for k in names}
        target, eps = tensors["target"], params["eps"]

        def loss():
            return ((mlp_block(x, ps, eps) - target) ** 2).sum(-1).mean()

        return training(name, loss, ps, names)
    if name in ("encoder_train", "encoder_grads"):
        # bench/transformer.cpp's block; its loss, the mean over batch and seq of sum(y^2).
        names = ["ln1_g", "ln1_b", "wq", "wk", "wv", "wo", "ln2_g", "ln2_b", "w1", "b1", "w2", "b2"]
        t = {k: tensors[k].clone().requires_grad_(True) for k in names}
        heads, eps, scale = int(params["heads"]), params["eps"], params["scale"]

        def loss():
            y = encoder_block(x, t, heads, eps, scale)
            return (y * y).sum(-1).mean()

        return training(name, loss, t, names)
    if name.startswith("gnn_"):
        return gnn_function(name)
    if name == "gpt_prefill":
        # The first `prefill` tokens: their logits (and the cache, made and dropped).
        tokens = tensors["tokens"][:int(params["prefill"])].long()
        return lambda: gpt2_forward(tokens, 0, None)[0]
    if name == "gpt_decode":
        # The token at position context - 1 after the cache of the ones before it (made once per
        # context, outside the timing); each call grows a copy of the cache by one (torch.cat).
        c = int(params["context"])
        tokens = tensors["tokens"].long()
        if c not in past_by_context:
            with torch.inference_mode():
                past_by_context[c] = gpt2_forward(tokens[:c - 1], 0, None)[1]
        past, token = past_by_context[c], tokens[c - 1:c]
        return lambda: gpt2_forward(token, c - 1, past)[0]
    if name == "mm":
        a, b = tensors["a"], tensors["b"]
        return (lambda: torch.bmm(a, b)) if a.dim() == 3 else (lambda: torch.mm(a, b))
    raise ValueError("unknown op " + name)


def gat_edges(x, a_src, a_dst, src, dst, slope):
    """GAT as PyG's GATConv computes it: scores per edge and head, a softmax over each
    destination's in-edges (scatter_reduce_ for the maximum), the source rows gathered per edge."""
    n, heads = x.shape[0], x.shape[1]
    s_src = (x * a_src).sum(-1)
    s_dst = (x * a_dst).sum(-1)
    e = torch.nn.functional.leaky_relu(s_src[src] + s_dst[dst], slope)  # [E, heads]
    index = dst.unsqueeze(-1).expand(-1, heads)
    most = torch.full((n, heads), float("-inf")).scatter_reduce_(
        0, index, e.detach(), "amax", include_self=True)
    p = (e - most[dst]).exp()
    total = torch.zeros(n, heads).index_add_(0, dst, p)
    alpha = p / total[dst]
    return torch.zeros_like(x).index_add_(0, dst, x[src] * alpha.unsqueeze(-1))


def gnn_function(name):
    """bench/gnn.cpp's graph ops, as PyG computes them without its compiled extensions: the
    source rows gathered per edge (h[src]), per-edge ops, and index_add_ into the destinations;
    and torch.sparse.mm for the sums. src and dst arrive as float32 (exact below 2^24 nodes)."""
    x = tensors["x"]
    n = x.shape[0]
    src, dst = tensors["src"].long(), tensors["dst"].long()
    if name == "gnn_sum":
        return lambda: torch.zeros_like(x).index_add_(0, dst, x[src])
    if name == "gnn_spmm":
        a = torch.sparse_coo_tensor(torch.stack([dst, src]), torch.ones(src.shape[0]),
                                    (n, n)).coalesce()
        return lambda: torch.sparse.mm(a, x)
    if name == "gnn_gcn":
        ones = torch.ones(src.shape[0])
        outdeg = torch.zeros(n).index_add_(0, src, ones).clamp_(min=1)
        indeg = torch.zeros(n).index_add_(0, dst, ones).clamp_(min=1)

        def gcn():
            w = (outdeg[src] * indeg[dst]).rsqrt()
            return torch.zeros_like(x).index_add_(0, dst, x[src] * w.unsqueeze(-1))
        return gcn
    if name == "gnn_gat":
        # x: [n, heads, feat]; a_src, a_dst: [heads, feat]; slope.
        a_src, a_dst = tensors["a_src"], tensors["a_dst"]
        return lambda: gat_edges(x, a_src, a_dst, src, dst, params["slope"])
    if name == "gnn_gat_grads":
        # The gradients of sum(dout * gat(x)) by x, a_src and a_dst, concatenated.
        xg, ag, bg = (tensors[k].clone().requires_grad_() for k in ("x", "a_src", "a_dst"))
        dout = tensors["dout"]

        def grads():
            xg.grad = ag.grad = bg.grad = None
            (gat_edges(xg, ag, bg, src, dst, params["slope"]) * dout).sum().backward()
            return torch.cat([xg.grad.reshape(-1), ag.grad.reshape(-1), bg.grad.reshape(-1)])
        return grads
    raise ValueError("unknown op " + name)


def training(name, loss, ps, names):
    """A training step (name ends with _train: zero_grad, backward, AdamW step) or the gradients
    of the loss by `names`, flattened and concatenated (name ends with _grads)."""
    if name.endswith("_grads"):
        def grads():
            for p in ps.values():
                p.grad = None
            loss().backward()
            return torch.cat([ps[k].grad.reshape(-1) for k in names])
        return grads
    opt = torch.optim.AdamW(ps.values(), lr=params.get("lr", 1e-3),
                            weight_decay=params.get("weight_decay", 0.01))

    def step():
        opt.zero_grad(set_to_none=True)
        value = loss()
        value.backward()
        opt.step()
        return value
    return step


def no_grad_for(op):
    """inference_mode for the forward ops; autograd on for training and gradients."""
    if op.endswith("_train") or op.endswith("_grads"):
        return torch.enable_grad()
    return torch.inference_mode()


def status_kb(key):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(key):
                return int(line.split()[1])
    raise ValueError("no " + key + " in /proc/self/status")


def handle(words):
    cmd = words[0]
    if cmd == "hello":
        return "ok %s %d, BLAS %s" % (torch.__version__, torch.get_num_threads(), blas_library())
    if cmd == "load":
        name, path, dims = words[1], words[2], [int(d) for d in words[3:]]
        values = np.fromfile(path, dtype=np.float32)
        if values.size != int(np.prod(dims)):
            raise ValueError("%s holds %d values, not %s" % (path, values.size, dims))
        # clone(): memory from PyTorch's own allocator, as a tensor a user made would have.
        tensors[name] = torch.from_numpy(values.reshape(dims)).clone()
        return "ok"
    if cmd == "param":
        params[words[1]] = float(words[2])
        return "ok"
    if cmd == "threads":
        global set_blas_threads
        if set_blas_threads is None:
            set_blas_threads = blas_thread_setter() or (lambda n: None)
        torch.set_num_threads(int(words[1]))
        set_blas_threads(int(words[1]))
        return "ok %d" % torch.get_num_threads()
    if cmd == "run":
        f, k = op_function(words[1]), int(words[2])
        with no_grad_for(words[1]):
            t0 = time.perf_counter()
            for _ in range(k):
                y = f()
                del y
            t1 = time.perf_counter()
        return "ok %.9f" % (t1 - t0)
    if cmd == "peak":
        # Bytes one call adds to the resident set at its peak: the peak reset (clear_refs 5)
        # after freed memory is returned (malloc_trim), the op's setup before it.
        f = op_function(words[1])
        gc.collect()
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        base = status_kb("VmRSS:")
        with no_grad_for(words[1]):
            y = f()
            del y
        return "ok %d" % ((status_kb("VmHWM:") - base) * 1024)
    if cmd == "save":
        with no_grad_for(words[1]):
            y = op_function(words[1])()
        y.detach().contiguous().numpy().astype(np.float32).tofile(words[2])
        return "ok"
    raise ValueError("unknown command " + cmd)


def main():
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            break
        try:
            answer = handle(words)
        except Exception as e:  # reported to the benchmark, which skips or aborts
            answer = "error " + " ".join(str(e).split())
        sys.stdout.write(answer + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
