"""The child-process code of compile_scaling.py (one string per framework; each is prefixed with
`MODEL`, `BUDGET_S` and, for minispore, `ROW` = "O2" or "pynative"). Each fills the harness's
`EXTRA` dict: steps_s (the first 3 steps, each synchronised), steady_s (median step after them),
and for minispore GRAPH the node counts and the first call's breakdown by phase."""

from _harness import SOURCE_LOADER

# graph mode reads the source of construct: the model goes through the harness's load_source
_LOADER = SOURCE_LOADER + """
import time
import numpy as np
EXTRA = {}
B, C = 32, 10
def data():
    rng = np.random.default_rng(0)
    shape = (B, 256) if MODEL.startswith("mlp") else (B, 3, 32, 32)
    xs = rng.standard_normal((4,) + shape).astype(np.float32)
    ys = rng.integers(0, C, (4, B)).astype(np.int32)
    return xs, ys
def timed(step, sync):
    steps = []
    for i in range(3):
        t0 = time.perf_counter()
        sync(step(i))
        steps.append(time.perf_counter() - t0)
    EXTRA["steps_s"] = steps
    samples, t_end, i = [], time.perf_counter() + BUDGET_S, 3
    while len(samples) < 3 or (time.perf_counter() < t_end and len(samples) < 50):
        t0 = time.perf_counter()
        sync(step(i))
        samples.append(time.perf_counter() - t0)
        i += 1
    EXTRA["steady_s"] = float(np.median(samples))
    EXTRA["steady_n"] = len(samples)
"""

# the model source, written against minispore; MindSpore runs it with the import changed
MODELS_SRC = '''
import minispore as ms
from minispore import nn, ops


class MLP(nn.Cell):
    def __init__(self, depth, d_in=256, hidden=256, classes=10):
        super().__init__()
        layers = []
        for i in range(depth - 1):
            layers += [nn.Dense(d_in if i == 0 else hidden, hidden), nn.ReLU()]
        layers.append(nn.Dense(hidden, classes))
        self.body = nn.SequentialCell(layers)

    def construct(self, x):
        return self.body(x)


class LeNet5(nn.Cell):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5, pad_mode="valid")
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(400, 120)
        self.fc2 = nn.Dense(120, 84)
        self.fc3 = nn.Dense(84, classes)

    def construct(self, x):
        x = self.pool(self.relu(self.conv1(x)))
        x = self.pool(self.relu(self.conv2(x)))
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


def conv_bn(cin, cout, k, stride):
    return nn.SequentialCell([nn.Conv2d(cin, cout, k, stride, pad_mode="pad", padding=k // 2,
                                        has_bias=False), nn.BatchNorm2d(cout)])


class Basic(nn.Cell):
    expansion = 1

    def __init__(self, cin, c, stride):
        super().__init__()
        self.a = conv_bn(cin, c, 3, stride)
        self.b = conv_bn(c, c, 3, 1)
        self.relu = nn.ReLU()
        self.down = stride != 1 or cin != c
        self.short = conv_bn(cin, c, 1, stride) if self.down else nn.Identity()

    def construct(self, x):
        return self.relu(self.b(self.relu(self.a(x))) + self.short(x))


class Bottleneck(nn.Cell):
    expansion = 4

    def __init__(self, cin, c, stride):
        super().__init__()
        self.a = conv_bn(cin, c, 1, 1)
        self.b = conv_bn(c, c, 3, stride)
        self.c = conv_bn(c, c * 4, 1, 1)
        self.relu = nn.ReLU()
        self.down = stride != 1 or cin != c * 4
        self.short = conv_bn(cin, c * 4, 1, stride) if self.down else nn.Identity()

    def construct(self, x):
        y = self.c(self.relu(self.b(self.relu(self.a(x)))))
        return self.relu(y + self.short(x))


class ResNet(nn.Cell):
    def __init__(self, block, counts, classes=10):
        super().__init__()
        self.stem = conv_bn(3, 64, 3, 1)
        self.relu = nn.ReLU()
        blocks, cin = [], 64
        for i, (c, n) in enumerate(zip((64, 128, 256, 512), counts)):
            for j in range(n):
                blocks.append(block(cin, c, 2 if (i > 0 and j == 0) else 1))
                cin = c * block.expansion
        self.blocks = nn.SequentialCell(blocks)
        self.fc = nn.Dense(cin, classes)

    def construct(self, x):
        x = self.blocks(self.relu(self.stem(x)))
        return self.fc(ops.mean(x, (2, 3)))


def make_net(model):
    if model.startswith("mlp"):
        return MLP(int(model[3:]))
    if model == "lenet":
        return LeNet5()
    if model == "resnet18":
        return ResNet(Basic, (2, 2, 2, 2))
    return ResNet(Bottleneck, (3, 4, 6, 3))


def train_step(model):
    net = make_net(model)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), 0.01, 0.9)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
    step.set_train()
    return step
'''

# phase timers wrapped around the library's functions (the library is not edited): totals of
# nested calls are charged to the innermost named phase by subtraction in `breakdown`
_PROBE = """
import functools
T = {}
NODES = {}
def _wrap(owner, name, key, on_call=None):
    f = getattr(owner, name)
    @functools.wraps(f)
    def w(*a, **k):
        if on_call:
            on_call(a)
        t0 = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            T[key] = T.get(key, 0.0) + time.perf_counter() - t0
    setattr(owner, name, w)
def install_probe():
    from minispore.core.graph import compile as gc, passes
    from minispore.backends.cpu import llvm_compile, native_jit, native_sink, native_split
    def count(a):            # the graph as parsed, before the passes rewrite it
        NODES["parsed"] = max(NODES.get("parsed", 0), len(list(a[0].all_nodes())))
    _wrap(gc, "_build", "build")
    _wrap(passes, "run_pipeline", "passes", count)
    _wrap(native_sink, "assign_offsets", "memplan")
    _wrap(native_sink.NativeProgram, "__init__", "sink")
    _wrap(native_split, "lower_kernel", "lower")
    _wrap(native_jit.NativeLibrary, "__init__", "library")
    _wrap(llvm_compile, "compile_batch", "llvm")
def breakdown(total):
    g = lambda k: T.get(k, 0.0)
    out = {"parse": g("build") - g("passes"), "passes": g("passes"), "memplan": g("memplan"),
           "lower": g("lower"), "glue": g("sink") - g("memplan") - g("library") - g("lower"),
           "llvm": g("llvm"), "load": g("library") - g("llvm")}
    out["other"] = total - g("build") - g("sink")
    return out
"""

MINISPORE_CASE = _LOADER + _PROBE + """
import minispore as ms
if ROW in ("O2", "tiered"):
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU", jit_level="O2")
else:
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
VERSIONS = {"minispore": getattr(ms, "__version__", "?"), "row": ROW}
M = load_source("bench_compile_model", %r)
xs, ys = data()
X = [ms.Tensor(x) for x in xs]
Y = [ms.Tensor(y) for y in ys]
step = M.train_step(MODEL)
install_probe()
TIERS = []
def one(i):
    out = step(X[i %% 4], Y[i %% 4])
    if ROW == "tiered":        # which program ran: the O1 one until the native build is done
        from minispore.core.graph import compile as gc
        TIERS.append(getattr(gc.last_compiled().program, "active", None))
    return out
timed(one, lambda l: float(l.asnumpy()))
if ROW == "tiered":
    from minispore.core.graph import compile as gc
    EXTRA["program"] = type(gc.last_compiled().program).__name__
    EXTRA["tier_by_step"] = TIERS
if ROW == "O2":
    from minispore.core.graph import compile as gc
    entry = gc.last_compiled()
    table = getattr(entry.program, "kernels", None)
    if table is not None:
        EXTRA["kernel_calls"] = table.calls
        EXTRA["kernels"] = len(table.kernels)
        EXTRA["modules_compiled"] = entry.program.lib.compiled
    EXTRA["nodes"] = len(list(entry.graph.all_nodes()))
    EXTRA["nodes_parsed"] = NODES.get("parsed")
    EXTRA["program"] = type(entry.program).__name__
    EXTRA["compiles"] = gc.stats["compiles"]
    EXTRA["breakdown"] = breakdown(EXTRA["steps_s"][0])
""" % MODELS_SRC

MINDSPORE_CASE = _LOADER + """
import mindspore as ms
ms.set_device("CPU")
ms.runtime.launch_blocking()   # on 2 cores the async pipeline stalls ~4 ms per op without it
ms.set_context(mode=ms.GRAPH_MODE)
VERSIONS = {"mindspore": ms.__version__}
M = load_source("bench_ms_compile_model", %r)
xs, ys = data()
X = [ms.Tensor(x) for x in xs]
Y = [ms.Tensor(y) for y in ys]
step = M.train_step(MODEL)
timed(lambda i: step(X[i %% 4], Y[i %% 4]), lambda l: float(l.asnumpy()))
""" % MODELS_SRC.replace("minispore", "mindspore")

# torch.compile (dynamo) looks the model classes' module up by name: a file, as for graph mode
TORCH_MODELS_SRC = """
import torch
from torch import nn
C = 10
def conv_bn(cin, cout, k, s):
    return nn.Sequential(nn.Conv2d(cin, cout, k, s, k // 2, bias=False), nn.BatchNorm2d(cout))
class Block(nn.Module):
    def __init__(self, cin, c, s, bottleneck):
        super().__init__()
        e = 4 if bottleneck else 1
        if bottleneck:
            self.body = nn.Sequential(conv_bn(cin, c, 1, 1), nn.ReLU(), conv_bn(c, c, 3, s),
                                      nn.ReLU(), conv_bn(c, c * 4, 1, 1))
        else:
            self.body = nn.Sequential(conv_bn(cin, c, 3, s), nn.ReLU(), conv_bn(c, c, 3, 1))
        self.short = conv_bn(cin, c * e, 1, s) if (s != 1 or cin != c * e) else nn.Identity()
    def forward(self, x):
        return torch.relu(self.body(x) + self.short(x))
def make_net(model):
    if model.startswith("mlp"):
        d = int(model[3:]); layers = []
        for i in range(d - 1):
            layers += [nn.Linear(256, 256), nn.ReLU()]
        return nn.Sequential(*layers, nn.Linear(256, C))
    if model == "lenet":
        return nn.Sequential(nn.Conv2d(3, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5),
                             nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 120),
                             nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, C))
    bott = model == "resnet50"
    counts = (3, 4, 6, 3) if bott else (2, 2, 2, 2)
    blocks, cin = [], 64
    for i, (c, n) in enumerate(zip((64, 128, 256, 512), counts)):
        for j in range(n):
            blocks.append(Block(cin, c, 2 if (i > 0 and j == 0) else 1, bott))
            cin = c * (4 if bott else 1)
    return nn.Sequential(conv_bn(3, 64, 3, 1), nn.ReLU(), *blocks,
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, C))
"""

TORCH_CASE = _LOADER + """
import torch
from torch import nn
VERSIONS = {"torch": torch.__version__, "threads": torch.get_num_threads()}
TM = load_source("bench_torch_compile_model", %r)
torch.manual_seed(0)
net = TM.make_net(MODEL).train()
cnet = torch.compile(net)
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
lossf = nn.CrossEntropyLoss()
xs, ys = data()
X = [torch.from_numpy(x) for x in xs]
Y = [torch.from_numpy(y.astype(np.int64)) for y in ys]
def step(i):
    opt.zero_grad(set_to_none=True)
    loss = lossf(cnet(X[i %% 4]), Y[i %% 4])
    loss.backward()
    opt.step()
    return loss
timed(step, lambda l: l.item())
""" % TORCH_MODELS_SRC

JAX_CASE = _LOADER + """
import functools
import jax, jax.numpy as jnp
VERSIONS = {"jax": jax.__version__, "backend": jax.default_backend()}
key = [jax.random.PRNGKey(0)]
def normal(shape, fan_in):
    key[0], k = jax.random.split(key[0])
    return jax.random.normal(k, shape, jnp.float32) * np.sqrt(2.0 / fan_in)
def dense(i, o):
    return {"w": normal((i, o), i), "b": jnp.zeros(o)}
def conv_p(cin, cout, k, bias=False):
    p = {"w": normal((cout, cin, k, k), cin * k * k)}
    if bias:
        p["b"] = jnp.zeros(cout)
    return p
def conv(p, x, s=1, pad="SAME"):
    y = jax.lax.conv_general_dilated(x, p["w"], (s, s), pad, dimension_numbers=("NCHW", "OIHW", "NCHW"))
    return y + p["b"][None, :, None, None] if "b" in p else y
def bn_p(c):
    return {"g": jnp.ones(c), "b": jnp.zeros(c)}
def bn(p, x):   # training-mode batch statistics (running averages not kept)
    m = x.mean((0, 2, 3), keepdims=True); v = x.var((0, 2, 3), keepdims=True)
    return (x - m) / jnp.sqrt(v + 1e-5) * p["g"][None, :, None, None] + p["b"][None, :, None, None]
def pool(x):
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
def cbn_p(cin, cout, k):
    return {"c": conv_p(cin, cout, k), "n": bn_p(cout)}
def cbn(p, x, s):
    return bn(p["n"], conv(p["c"], x, s))
def init(model):
    if model.startswith("mlp"):
        d = int(model[3:])
        return {"layers": [dense(256, 256) for _ in range(d - 1)] + [dense(256, C)]}, None
    if model == "lenet":
        return {"c1": conv_p(3, 6, 5, True), "c2": conv_p(6, 16, 5, True), "f1": dense(400, 120),
                "f2": dense(120, 84), "f3": dense(84, C)}, None
    bott = model == "resnet50"
    counts = (3, 4, 6, 3) if bott else (2, 2, 2, 2)
    blocks, strides, cin = [], [], 64
    for i, (c, n) in enumerate(zip((64, 128, 256, 512), counts)):
        for j in range(n):
            s = 2 if (i > 0 and j == 0) else 1
            e = 4 if bott else 1
            if bott:
                b = {"a": cbn_p(cin, c, 1), "b": cbn_p(c, c, 3), "c": cbn_p(c, c * 4, 1)}
            else:
                b = {"a": cbn_p(cin, c, 3), "b": cbn_p(c, c, 3)}
            if s != 1 or cin != c * e:
                b["short"] = cbn_p(cin, c * e, 1)
            blocks.append(b); strides.append(s)
            cin = c * e
    return {"stem": cbn_p(3, 64, 3), "blocks": blocks, "fc": dense(cin, C)}, tuple(strides)
params, STRIDES = init(MODEL)
def forward(p, x):
    if MODEL.startswith("mlp"):
        for l in p["layers"][:-1]:
            x = jax.nn.relu(x @ l["w"] + l["b"])
        return x @ p["layers"][-1]["w"] + p["layers"][-1]["b"]
    if MODEL == "lenet":
        x = pool(jax.nn.relu(conv(p["c1"], x, 1, "VALID")))
        x = pool(jax.nn.relu(conv(p["c2"], x, 1, "VALID"))).reshape(x.shape[0], -1)
        x = jax.nn.relu(x @ p["f1"]["w"] + p["f1"]["b"])
        x = jax.nn.relu(x @ p["f2"]["w"] + p["f2"]["b"])
        return x @ p["f3"]["w"] + p["f3"]["b"]
    x = jax.nn.relu(cbn(p["stem"], x, 1))
    for b, s in zip(p["blocks"], STRIDES):
        if "c" in b:
            y = cbn(b["c"], jax.nn.relu(cbn(b["b"], jax.nn.relu(cbn(b["a"], x, 1)), s)), 1)
        else:
            y = cbn(b["b"], jax.nn.relu(cbn(b["a"], x, s)), 1)
        x = jax.nn.relu(y + (cbn(b["short"], x, s) if "short" in b else x))
    x = x.mean((2, 3))
    return x @ p["fc"]["w"] + p["fc"]["b"]
def loss_fn(p, x, y):
    logp = jax.nn.log_softmax(forward(p, x), -1)
    return -jnp.take_along_axis(logp, y[:, None], 1).mean()
@functools.partial(jax.jit, donate_argnums=(0, 1))
def train_step(p, v, x, y):
    loss, g = jax.value_and_grad(loss_fn)(p, x, y)
    v = jax.tree_util.tree_map(lambda a, b: 0.9 * a + b, v, g)
    p = jax.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, v)
    return p, v, loss
xs, ys = data()
X = [jnp.asarray(x) for x in xs]
Y = [jnp.asarray(y) for y in ys]
state = [params, jax.tree_util.tree_map(jnp.zeros_like, params)]
def step(i):
    state[0], state[1], loss = train_step(state[0], state[1], X[i % 4], Y[i % 4])
    return loss
timed(step, lambda l: float(l.block_until_ready()))
"""
