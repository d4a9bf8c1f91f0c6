"""bert_ref.py - the native engine's bert_tiny against a plain-PyTorch BERT
of the same configuration and names (fp64 and fp32 references): forward
logits (the MLM head's, at the masked positions), every parameter's gradient, the loss over 5 AdamW steps and the final
weights, with the engine's dropout masks (embeddings, attention
probabilities, attention output, FFN output) applied; and inference with
eval on in every fusion / memory mode."""
import math
import os
import shutil
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxw  # noqa: E402

torch.manual_seed(0)
LAYERS, C, H, FF, V, P, TYPES = 2, 128, 2, 512, 30522, 512, 2


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = nn.Module()
        self.attention.query = nn.Linear(C, C)
        self.attention.key = nn.Linear(C, C)
        self.attention.value = nn.Linear(C, C)
        self.attn_out = nn.Linear(C, C)
        self.attn_norm = nn.LayerNorm(C, eps=1e-12)
        self.ffn_in = nn.Linear(C, FF)
        self.ffn_out = nn.Linear(FF, C)
        self.ffn_norm = nn.LayerNorm(C, eps=1e-12)

    def forward(self, x, masks, prefix):
        b, t, _ = x.shape
        d = C // H
        split = lambda z: z.view(b, t, H, d).transpose(1, 2)  # noqa: E731
        a = self.attention
        q, k, v = split(a.query(x)), split(a.key(x)), split(a.value(x))
        p = F.softmax(q @ k.transpose(-1, -2) / math.sqrt(d), dim=-1)
        p = p * masks.get(prefix + "attention", 1.0)
        ctx = (p @ v).transpose(1, 2).reshape(b, t, C)
        x = self.attn_norm(x + self.attn_out(ctx) * masks.get(prefix + "attn_drop", 1.0))
        y = self.ffn_out(F.gelu(self.ffn_in(x))) * masks.get(prefix + "ffn_drop", 1.0)
        return self.ffn_norm(x + y)


class Bert(nn.Module):
    def __init__(self):
        super().__init__()
        self.word = nn.Embedding(V, C)
        self.position = nn.Embedding(P, C)
        self.token_type = nn.Embedding(TYPES, C)
        self.emb_norm = nn.LayerNorm(C, eps=1e-12)
        self.layers = nn.ModuleList(Layer() for _ in range(LAYERS))
        self.mlm = nn.Module()
        self.mlm.transform = nn.Linear(C, C)
        self.mlm.norm = nn.LayerNorm(C, eps=1e-12)
        self.mlm.decoder = nn.Module()
        self.mlm.decoder.bias = nn.Parameter(torch.zeros(V))
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.bias, std=0.02)  # non-zero, so bias gradients matter
        nn.init.normal_(self.mlm.decoder.bias, std=0.02)

    def forward(self, ids, types, pos, masks):
        b, t = ids.shape
        x = self.word(ids) + self.position(torch.arange(t))[None] + self.token_type(types)
        x = self.emb_norm(x) * masks.get("emb_drop", 1.0)
        for i, layer in enumerate(self.layers):
            x = layer(x, masks, "layers.%d." % i)
        x = torch.gather(x, 1, pos.long()[..., None].expand(-1, -1, C))
        h = self.mlm.norm(F.gelu(self.mlm.transform(x)))
        return (h @ self.word.weight.t() + self.mlm.decoder.bias).reshape(-1, V)


def masks_of(d, step, B, T, dtype):
    """The engine's masks of one step, shaped for the reference."""
    m = {}
    for k, v in d.items():
        if k.startswith("mask.") and k.endswith(".%d" % step):
            name = k[5:-len(".%d" % step)]
            v = v.to(dtype)
            m[name] = v if v.dim() == 4 else v.reshape(B, T, -1) if v.shape[0] == B * T else v
    return m


def run_ref(net, d, steps, dtype, B, T, lr):
    ref = Bert().to(dtype)
    ref.load_state_dict({k: v.to(dtype) for k, v in net.state_dict().items()})
    opt = torch.optim.AdamW(ref.parameters(), lr=lr, weight_decay=0.01)
    ids, types, pos, t = d["input_ids"], d["token_type_ids"], d["mlm_positions"], d["target"]
    r = {"losses": []}
    for s in range(1, steps + 1):
        opt.zero_grad()
        out = ref(ids, types, pos, masks_of(d, s, B, T, dtype))
        loss = F.cross_entropy(out, t)
        loss.backward()
        if s == 1:
            r["output"] = out.detach().double()
            for k, p in ref.named_parameters():
                r["grad." + k] = p.grad.detach().clone().double()  # a copy: zero_grad zeroes in place
        r["losses"].append(loss.item())
        opt.step()
    r["losses"] = torch.tensor(r["losses"], dtype=torch.float64)
    for k, v in ref.state_dict().items():
        r["final." + k] = v.double()
    return r


def rel(a, b, floor):
    return ((a.double().reshape(b.shape) - b).abs().max() / max(b.abs().max().item(), floor)).item()


def main():
    chk = mxw.Checker()
    work = mxw.tmpdir()
    net = Bert()
    wfile = os.path.join(work, "w.mxw")
    mxw.save(wfile, net.state_dict())
    B, T, steps, lr = 3, 16, 5, 1e-3
    for ev in ("off", "on"):
        for comp in ("none", "default"):
            tag = "bert_tiny train eval=%s compile=%s" % (ev, comp)
            dump = os.path.join(work, "d.mxw")
            mxw.engine("--model", "bert_tiny", "--task", "train", "--batch", B, "--seq-len", T,
                       "--threads", 2, "--eval", ev, "--compile", comp, "--weights", wfile,
                       "--steps", steps, "--lr", lr, "--dump", dump)
            d = mxw.load(dump)
            r64 = run_ref(net, d, steps, torch.float64, B, T, lr)
            r32 = run_ref(net, d, steps, torch.float32, B, T, lr)
            groups = [("output", ["output"], 1e-4), ("losses", ["losses"], 1e-4),
                      ("every gradient", [k for k in r64 if k.startswith("grad.")], 1e-4),
                      ("every final weight", [k for k in r64 if k.startswith("final.")], 1e-3)]
            for what, keys, base in groups:
                gmax = max(r64[k].abs().max().item() for k in keys)
                worst, wk = max((rel(d[k], r64[k], 1e-3 * gmax), k) for k in keys)
                vs32 = max(rel(d[k], r32[k], 1e-3 * gmax) for k in keys)
                chk.true("%s %s (%d tensors)" % (tag, what, len(keys)), worst <= base or vs32 <= base,
                         "worst relative maxdiff %.3e (%s) vs fp64, %.3e vs fp32, tolerance %.0e"
                         % (worst, wk, vs32, base))
            if ev == "off":
                m = d["mask.layers.0.attention.1"]
                frac = (m == 0).double().mean().item()
                chk.true("%s attention dropout drops about 10%%" % tag, 0.05 < frac < 0.15,
                         "(%.3f)" % frac)
    ref = Bert().double()
    ref.load_state_dict({k: v.double() for k, v in net.state_dict().items()})
    for comp in ("none", "default"):
        for im in ("off", "on"):
            tag = "bert_tiny infer eval compile=%s inference_mode=%s" % (comp, im)
            dump = os.path.join(work, "i.mxw")
            mxw.engine("--model", "bert_tiny", "--task", "infer", "--batch", B, "--seq-len", T,
                       "--eval", "on", "--compile", comp, "--inference-mode", im, "--weights", wfile,
                       "--threads", 2, "--dump", dump)
            d = mxw.load(dump)
            with torch.no_grad():
                out = ref(d["input_ids"], d["token_type_ids"], d["mlm_positions"], {})
            chk.close("%s output" % tag, d["output"], out)
    shutil.rmtree(work)
    return chk.verdict()


if __name__ == "__main__":
    sys.exit(main())
