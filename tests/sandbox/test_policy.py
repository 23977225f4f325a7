"""The sandbox's AST policy: DESIGN §5 attacks are refused with a Japanese reason and a line
number; realistic analysis code passes untouched (a false positive costs the user a retry)."""

from __future__ import annotations

import ast
import dataclasses
import re
import textwrap
import time

import pytest

from keiri_agent.errors import BlockError
from keiri_agent.sandbox.policy import (
    MAX_CODE_CHARS,
    PolicyError,
    PolicyViolation,
    check_code,
    enforce_policy,
)
from keiri_agent.sandbox.profiles import ANALYSIS, CODEACT, SandboxProfile

PROFILES = [pytest.param(ANALYSIS, id="analysis"), pytest.param(CODEACT, id="codeact")]
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")

# (code, rule that must be reported, text the Japanese message must name)
REJECTED: list[tuple[str, str, str]] = [
    # __import__ / builtins / importlib
    ("__import__('os').system('id')", "forbidden-builtin", "__import__"),
    ("__builtins__['eval']('1')", "dunder-name", "__builtins__"),
    ("import builtins\nbuiltins.exec('1')", "import-not-allowed", "builtins"),
    ("importlib.import_module('os')", "module-pivot", "importlib"),
    ("import importlib", "import-not-allowed", "importlib"),
    ("from importlib import import_module", "import-not-allowed", "importlib"),
    # exec / eval / compile of built strings
    ("exec('imp' + 'ort os')", "forbidden-builtin", "exec"),
    ("eval('1 + ' + x)", "forbidden-builtin", "eval"),
    ("code = compile(src, '<s>', 'exec')", "forbidden-builtin", "compile"),
    # computed getattr, vars/globals/locals
    ("name = '__cla' + 'ss__'\ngetattr(x, name)", "dynamic-attribute", "getattr"),
    ("getattr(x, '__class__')", "dunder-attribute", "__class__"),
    ("setattr(obj, key, value)", "dynamic-attribute", "setattr"),
    ("g = getattr\ng(x, 'a')", "dynamic-attribute", "getattr"),
    ("import operator\nf = operator.attrgetter(name)", "dynamic-attribute", "attrgetter"),
    ("import operator\noperator.attrgetter('__class__.__base__')(1)", "dunder-attribute", "__class__"),
    ("vars()", "forbidden-builtin", "vars"),
    ("globals()['__builtins__']", "forbidden-builtin", "globals"),
    ("print(locals())", "forbidden-builtin", "locals"),
    ("X = type('X', (), {})", "type-creation", "type()"),
    # __subclasses__ walks and other dunders
    ("().__class__.__bases__[0].__subclasses__()", "dunder-attribute", "__subclasses__"),
    ("f.__globals__['os']", "dunder-attribute", "__globals__"),
    ("(lambda: 0).__code__", "dunder-attribute", "__code__"),
    ("x.__dict__", "dunder-attribute", "__dict__"),
    ("int.mro()", "internal-attribute", "mro"),
    ("import string\nstring.Formatter().get_field('0.__class__', [1], {})", "dunder-string", "__class__"),
    # os/sys/ctypes/pickle through attributes of allowed modules; sys.modules
    ("import numpy as np\nnp.os.system('id')", "module-pivot", "os"),
    ("import pandas as pd\npd.io.common.os.environ", "module-pivot", "os"),
    ("import numpy as np\nnp.ctypeslib.as_array(p, (1,))", "module-pivot", "ctypeslib"),
    ("import numpy as np\na = np.zeros(3)\na.ctypes.data", "module-pivot", "ctypes"),
    ("import matplotlib\nmatplotlib.sys.modules", "module-pivot", "sys"),
    ("sys.modules['os']", "module-pivot", "sys"),
    ("from matplotlib import os", "module-pivot", "os"),
    # format-string attribute access
    ("'{0.__class__}'.format(1)", "format-string", "{0.__class__}"),
    ("'{g.gi_frame.f_back}'.format(g=gen)", "format-string", "gi_frame"),
    ("'{x}'.format_map(mapping)", "format-string", "format_map"),
    # frame walking
    ("def g():\n    yield 1\nframe = g().gi_frame.f_back", "internal-attribute", "gi_frame"),
    ("try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    t = e.__traceback__.tb_frame", "internal-attribute", "tb_frame"),
    ("frame.f_back.f_globals", "internal-attribute", "f_back"),
    ("match x:\n    case str(__class__=cls):\n        pass", "dunder-attribute", "__class__"),
    # strings evaluated as code behind library APIs
    ("import typing\nhints = typing.get_type_hints(f)", "string-evaluation", "get_type_hints"),
    ("import dataclasses\ndataclasses._create_fn('f', [], ['return 1'])", "string-evaluation", "_create_fn"),
    ("df.style.from_custom_template('.', 't.tpl')", "string-evaluation", "from_custom_template"),
    # ctypes / mmap and the rest of the system
    ("import ctypes", "import-not-allowed", "ctypes"),
    ("import mmap", "import-not-allowed", "mmap"),
    ("import os", "import-not-allowed", "os"),
    ("from os import system", "import-not-allowed", "os"),
    ("import sys", "import-not-allowed", "sys"),
    ("import subprocess", "import-not-allowed", "subprocess"),
    ("import socket", "import-not-allowed", "socket"),
    ("import urllib.request", "import-not-allowed", "urllib.request"),
    ("import multiprocessing", "import-not-allowed", "multiprocessing"),
    ("import threading", "import-not-allowed", "threading"),
    ("import signal", "import-not-allowed", "signal"),
    ("import resource", "import-not-allowed", "resource"),
    ("import shutil", "import-not-allowed", "shutil"),
    ("import gc", "import-not-allowed", "gc"),
    ("import inspect", "import-not-allowed", "inspect"),
    ("import sklearn.externals", "import-not-allowed", "sklearn.externals"),
    ("import numpy.distutils", "import-not-allowed", "numpy.distutils"),
    ("from sklearn import datasets", "import-not-allowed", "sklearn.datasets"),
    ("from matplotlib import animation", "import-not-allowed", "matplotlib.animation"),
    ("from . import helpers", "import-relative", "相対 import"),
    ("from pandas import *", "import-star", "from pandas import *"),
    # pickle loaders
    ("import pickle", "import-not-allowed", "pickle"),
    ("import pandas as pd\ndf = pd.read_pickle('x.pkl')", "pickle-loader", "read_pickle"),
    ("from pandas import read_pickle", "pickle-loader", "read_pickle"),
    ("import numpy as np\nnp.load('x.npy', allow_pickle=True)", "pickle-loader", "allow_pickle"),
    ("import numpy as np\nnp.load('x.npy', **options)", "dynamic-keyword", "**"),
    ("model = joblib.load('model.pkl')", "pickle-loader", "joblib"),
    ("import numpy as np\nnp.load('x.npy', None, True)", "pickle-loader", "allow_pickle"),
    ("import pandas as pd\npd.compat.pickle_compat.loads(b)", "pickle-loader", "pickle_compat"),
    # DataFrame.query / pd.eval strings
    ("df.query(expr_var)", "query-expression", "DataFrame.query"),
    ("df.query('金額 > @limit')", "query-expression", "@"),
    ("df.query('a.__class__')", "query-expression", "__"),
    ("f = df.query", "query-expression", "DataFrame.query"),
    ("import pandas as pd\npd.eval('a + b')", "pandas-eval", "eval"),
    ("df.eval('c = a + b')", "pandas-eval", "eval"),
    # subprocesses started by libraries (matplotlib usetex / pgf / ffmpeg)
    ("import matplotlib.pyplot as plt\nplt.rc('text', usetex=True)", "external-process", "usetex"),
    ("import matplotlib.pyplot as plt\nplt.rcParams['text.usetex'] = True", "external-process", "text.usetex"),
    ("import matplotlib as mpl\nmpl.rcParams['animation.ffmpeg_path'] = '/bin/sh'", "external-process", "animation.ffmpeg_path"),
    ("import matplotlib.pyplot as plt\nplt.savefig('a.pdf', backend='pgf')", "external-process", "pgf"),
    ("import matplotlib\nmatplotlib.use('module://evil')", "dynamic-import", "module://evil"),
    ("import pandas as pd\nclip = pd.read_clipboard()", "external-process", "read_clipboard"),
    ("import numpy as np\nnp.f2py.run_main(['-c', 'x.f'])", "module-pivot", "f2py"),
    # host files
    ("import pandas as pd\npd.read_csv('/etc/passwd', sep=':')", "host-path", "/etc/passwd"),
    ("secrets = open('/proc/self/environ').read()", "host-path", "/proc/self/environ"),
    ("ppid_env = open(f'/proc/{ppid}/environ').read()", "host-path", "/proc/"),
    # network, interactive and debugger builtins
    ("import pandas as pd\npd.read_csv('https://example.com/a.csv')", "network-url", "https://example.com/a.csv"),
    ("import seaborn as sns\ntips = sns.load_dataset('tips')", "network-url", "load_dataset"),
    ("breakpoint()", "forbidden-builtin", "breakpoint"),
    ("answer = input('続けますか？')", "forbidden-builtin", "input"),
    ("help(len)", "forbidden-builtin", "help"),
]  # fmt: skip

# Issue 17's bypass classes, each with fresh attempts: the general rule behind each refusal
# (visible attribute names, visible format templates, annotations checked as code, no class
# hooks, visible keywords, modules judged by their import, no interpreter internals).
BYPASSES: list[tuple[str, str, str]] = [
    # attribute names built at run time and resolved by string.Formatter
    ("import string\nf = string.Formatter()\nobj, _ = f.get_field('0.' + part, [df], {})", "format-string", "get_field"),
    ("from string import Formatter\nFormatter().vformat(tmpl, [df], {})", "format-string", "vformat"),
    ("tmpl = '{0.' + '_' * 2 + 'class' + '_' * 2 + '}'\nprint(tmpl.format(df))", "format-string", "format"),
    ("pick = f'{{0.{name}}}'.format\nprint(pick(df))", "format-string", "format"),
    ("import string\nstring.Formatter().format(template, df)", "format-string", "format"),
    # typing evaluating strings (private helpers, forward references)
    ("import typing\nvalue = typing._eval_type(ref, namespace, None)", "private-attribute", "_eval_type"),
    ("from typing import _eval_type", "private-attribute", "_eval_type"),
    ("import typing\ndef f(x: 'open(\"/etc/shadow\").read()'): pass\ntyping.get_type_hints(f)", "host-path", "/etc/shadow"),
    ("def f(x: '__import__(\"os\")') -> None:\n    pass", "forbidden-builtin", "__import__"),
    ("def g(x: 'np.os.getcwd()'): pass", "module-pivot", "os"),
    ("def h() -> 'x +* y': pass", "annotation-string", "x +* y"),
    # functools.singledispatch evaluating string annotations
    ("import pandas as pd\nfrom functools import singledispatch\n@singledispatch\ndef f(a): pass\n@f.register\ndef _(a: 'pd.io.common.read_csv'): pass", "import-not-allowed", "pandas.io"),
    ("import functools\n@functools.singledispatch\ndef f(a): pass\n@f.register\ndef _(a: 'open(\"/etc/shadow\").read()'): pass", "host-path", "/etc/shadow"),
    ("from functools import singledispatch\n@singledispatch\ndef f(a): pass\n@f.register\ndef _(a: 'exec(payload)'): pass", "forbidden-builtin", "exec"),
    ("import functools\n@functools.singledispatch\ndef f(a): pass\n@f.register\ndef _(a: \"list['getattr(df, name)']\"): pass", "dynamic-attribute", "getattr"),
    # match statements hooked by metaclasses (__instancecheck__, __match_args__)
    ("class Spy(type):\n    def __instancecheck__(cls, obj):\n        return True", "metaclass", "metaclass"),
    ("class Probe(metaclass=Meta):\n    pass\nmatch df:\n    case Probe(x):\n        print(x)", "metaclass", "metaclass"),
    ("class Probe:\n    __match_args__ = (secret_name,)\nmatch df:\n    case Probe(x):\n        print(x)", "dunder-name", "__match_args__"),
    ("class P:\n    def __getattribute__(self, name):\n        return name", "dunder-name", "__getattribute__"),
    ("Hook = type(int)('Hook', (), namespace)", "type-creation", "type()"),
    # functools.update_wrapper / wraps copying attributes by computed names
    ("import functools\nfunctools.update_wrapper(sink, df, assigned=(name,), updated=())", "dynamic-attribute", "update_wrapper"),
    ("from functools import update_wrapper\nupdate_wrapper(sink, df, ['__class__'], [])", "dunder-attribute", "__class__"),
    ("import functools\n@functools.wraps(df, assigned=names)\ndef sink(): pass", "dynamic-attribute", "wraps"),
    ("import functools\nfunctools.WRAPPER_ASSIGNMENTS = (name,)", "module-assignment", "WRAPPER_ASSIGNMENTS"),
    ("import functools\ncopy = functools.update_wrapper\ncopy(a, b, names)", "dynamic-attribute", "update_wrapper"),
    # np.load under an alias, pickles turned on by ** mappings or positions
    ("from numpy import load as fetch\narr = fetch('x.npy', **{'allow_pickle': True})", "pickle-loader", "allow_pickle"),
    ("import numpy as np\nfetch = np.load\narr = fetch('x.npy', None, True)", "pickle-loader", "allow_pickle"),
    ("import numpy as np\nopts = {}\nopts['allow' + '_pickle'] = True\nnp.load('x.npy', **opts)", "dynamic-keyword", "**"),
    ("import numpy as np\nnp.load(*['x.npy', None, True])", "pickle-loader", "load"),
    ("import functools\nimport numpy as np\nreader = functools.partial(np.load, mmap_mode=None)", "pickle-loader", "load"),
    ("import matplotlib.pyplot as plt\nplt.rc('text', **{'usetex': True})", "external-process", "usetex"),
    # pandas.core.computation.scope.Scope reaching the caller's frames
    ("import pandas as pd\nscope = pd.core.computation.scope.Scope(level=1)", "import-not-allowed", "pandas.core"),
    ("import pandas\nframes = pandas.core.computation.scope.ensure_scope(2)", "import-not-allowed", "pandas.core"),
    ("from pandas import core\ns = core.computation.scope.Scope(0)", "import-not-allowed", "pandas.core"),
    ("import pandas as pd\nmod = getattr(pd, 'core')", "import-not-allowed", "pandas.core"),
    ("import numpy as np\nnp.lib.format.read_magic(f)", "import-not-allowed", "numpy.lib"),
    # frame walks into the worker's locals
    ("import sys\nframe = sys._getframe(1)", "private-attribute", "_getframe"),
    ("import warnings\ncaller = warnings._next_external_frame(frame)", "private-attribute", "_next_external_frame"),
    ("import dataclasses\nlocals_ = dataclasses.inspect.stack()[1].frame", "module-pivot", "inspect"),
    ("import dataclasses\nframe = dataclasses.inspect.currentframe()", "module-pivot", "inspect"),
    ("async def job():\n    return 1\nc = job()\nf = c.cr_frame.f_back", "internal-attribute", "cr_frame"),
    ("async def agen():\n    yield 1\nframe = agen().ag_frame", "internal-attribute", "ag_frame"),
    ("try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    tb = e.with_traceback(None)\n    seen = tb.tb_next", "internal-attribute", "tb_next"),
    ("def g():\n    yield 1\nx = g().gi_frame.f_locals['report']", "internal-attribute", "f_locals"),
    ("loc = gen.gi_suspended or frame.f_lasti", "internal-attribute", "f_lasti"),
    ("import json\njson.dumps = forged", "module-assignment", "dumps"),
    # the loosened rules keep these closed: a named mapping is expanded only while it is used
    # for nothing but '**', a private attribute is allowed only by name, 'type' only in a test
    ("import numpy as np\nstyle = {'allow_pickle': True}\nnp.load('x.npy', **style)", "pickle-loader", "allow_pickle"),
    ("import numpy as np\nkw = {'mmap_mode': None}\nkw.update(extra)\nnp.load('x.npy', **kw)", "dynamic-keyword", "load"),
    ("import matplotlib.pyplot as plt\nopts = {'usetex': True}\nplt.rc('text', **opts)", "external-process", "usetex"),
    ("import numpy as np\nfetch = np.load\nopts = {'mmap_mode': 'r'}\nopts = extra\nfetch('x.npy', **opts)", "dynamic-keyword", "load"),
    ("make = type\nHook = make('Hook', (), {})", "type-creation", "type()"),
    ("ok = isinstance(x, type) and type('Hook', (), {})", "type-creation", "type()"),
    ("import numpy as np\nnp.lib.npyio.NpzFile(f, allow_pickle=False)", "import-not-allowed", "numpy.lib.npyio"),
    ("import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax._axes._remove_method", "private-attribute", "_axes"),
]  # fmt: skip

ALLOWED: list[str] = [
    """
    import pandas as pd
    df = pd.read_csv("売上.csv", encoding="utf-8-sig")
    summary = df.groupby(["部門", "月"], as_index=False)["金額"].sum()
    summary.to_csv("部門別売上.csv", index=False, encoding="utf-8-sig")
    """,
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams["font.family"] = "IPAexGothic"
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.bar(["4月", "5月"], [120, 150])
    ax.set_title(f"{2024}年度 売上推移")
    plt.savefig("売上.png", dpi=150, bbox_inches="tight")
    plt.close(fig)
    """,
    """
    import numpy as np
    import seaborn as sns
    import matplotlib.pyplot as plt
    sns.set_theme(style="whitegrid")
    pivot = df.pivot_table(index="部門", columns="月", values="金額", aggfunc="sum")
    sns.heatmap(pivot, annot=True, fmt=",.0f", cmap="Blues")
    plt.savefig("heatmap.png")
    """,
    """
    from sklearn.linear_model import LinearRegression
    from sklearn.model_selection import train_test_split
    from sklearn.metrics import r2_score
    X_train, X_test, y_train, y_test = train_test_split(df[["広告費"]], df["売上"], random_state=0)
    model = LinearRegression().fit(X_train, y_train)
    print(f"R2 = {r2_score(y_test, model.predict(X_test)):.3f}")
    """,
    """
    import pandas as pd
    df["日付"] = pd.to_datetime(df["日付"], errors="coerce")
    monthly = df.set_index("日付").resample("ME")["金額"].agg(["sum", "mean", "count"])
    top = {k: v for k, v in monthly["sum"].items() if v > 0}
    squares = [x * x for x in range(10)]
    """,
    "large = df.query('金額 > 1000')",
    "sales = df.query(\"部門 == '営業' and 金額 >= 500\")",
    "total = getattr(df, 'sum')()\nok = hasattr(df, 'columns')",
    "import numpy as np\narr = np.load('a.npy')\nsafe = np.load('b.npy', allow_pickle=False)\nnp.save('c.npy', arr)",
    "import datetime\ntoday = datetime.date.today()\nstamp = datetime.datetime.now().strftime('%Y%m%d')",
    """
    from collections import Counter, defaultdict
    from dataclasses import dataclass, field
    from typing import Any
    import json, math, statistics, re

    @dataclass
    class Row:
        name: str
        values: list[float] = field(default_factory=list)

        def mean(self) -> float:
            return statistics.mean(self.values) if self.values else math.nan

    counts = Counter(re.findall(r"\\w+", "a b a"))
    with open("out.json", "w", encoding="utf-8") as f:
        json.dump(dict(counts), f, ensure_ascii=False)
    """,
    """
    class Report:
        def __init__(self, title):
            self.title = title

    class Monthly(Report):
        def __init__(self, title, month):
            super().__init__(title)
            self.month = month

    def main():
        '''Print the class name; __init__ and __call__ in a docstring are harmless.'''
        print(type(Monthly("売上", 4)).__name__)

    if __name__ == "__main__":
        main()
    """,
    """
    from __future__ import annotations
    import numpy as np
    from numpy.random import default_rng
    from numpy import linalg
    rng = default_rng(0)
    x = rng.normal(size=(3, 3))
    print("{:,.1f} 円".format(float(linalg.norm(x))), "{name}: {value:.1%}".format(name="率", value=0.25))
    """,
    """
    import pandas as pd
    with pd.ExcelWriter("集計.xlsx") as writer:
        df.to_excel(writer, sheet_name="集計", index=False)
    df.to_pickle("cache.pkl")
    styled = df.style.format("{:,.0f}")
    data = pd.read_excel("入力.xlsx", sheet_name=None)
    """,
    """
    import io, hashlib, base64
    from decimal import Decimal, ROUND_HALF_UP
    tax = (Decimal("1080") * Decimal("0.1")).quantize(Decimal("1"), rounding=ROUND_HALF_UP)
    digest = hashlib.sha256("請求書".encode()).hexdigest()
    buf = io.StringIO()
    df.to_csv(buf)
    try:
        value = int("x")
    except ValueError as e:
        print(f"変換できません: {e}")
    """,
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter
    plt.rc("font", family="IPAexGothic")
    ax = df.plot(kind="bar", x="部門", y="金額", legend=False)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    input_df = df.copy()
    input = input_df
    print(input.head(), sorted(dir(input_df))[:3])
    """,
    """
    from sklearn.cluster import KMeans
    from sklearn.preprocessing import StandardScaler
    import numpy as np
    scaled = StandardScaler().fit_transform(df[["金額", "数量"]])
    labels = KMeans(n_clusters=3, n_init=10, random_state=0).fit_predict(scaled)
    children = np.random.default_rng(1).spawn(2)
    print(np.bincount(labels), np.__version__)
    """,
]


# Legitimate analysis code that the bypass rules must keep passing.
ALLOWED_MORE: list[str] = [
    """
    import numpy as np
    import pandas as pd
    import matplotlib.pyplot as plt
    from numpy.lib.stride_tricks import sliding_window_view
    style = {"color": "tab:blue", "alpha": 0.8}
    fig, ax = plt.subplots()
    ax.bar(["a", "b"], [1, 2], **style)
    next_color = ax._get_lines.get_next_color()
    ax.plot([1, 2], [2, 3], color=next_color)
    formats = {"金額": "{:,.0f}", "率": "{:.1%}"}
    styled = df.style.format(formats)
    number_format = chosen_format
    styled = df.style.format(number_format, na_rep="-")
    windows = np.lib.stride_tricks.sliding_window_view(np.arange(10), 3)
    means = sliding_window_view(df["金額"].to_numpy(), 7).mean(axis=1)
    kinds = [v for v in (int, str, pd.DataFrame) if isinstance(v, type)]
    print(issubclass(pd.DataFrame, (type, object)), kinds)
    """,
    """
    import functools
    import pandas as pd
    from dataclasses import dataclass

    def logged(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            print("実行:", func.__name__)
            return func(*args, **kwargs)
        return wrapper

    @logged
    def monthly(frame: pd.DataFrame, column: str = "金額") -> "pd.Series":
        return frame.groupby("月")[column].sum()

    @dataclass
    class Summary:
        total: int
        label: str = "合計"

        def __str__(self) -> str:
            return f"{self.label}: {self.total:,} 円"

    def plot(ax, **style):
        ax.plot([1, 2], [3, 4], **style)
    """,
    """
    import numpy as np
    import pandas as pd
    import matplotlib.pyplot as plt
    from pandas.api.types import is_numeric_dtype
    numeric = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])]
    template = "{:,.0f} 円"
    print(template.format(df["金額"].sum()), "{name}: {v:.1%}".format(name="率", v=0.5))
    df["表示"] = df["金額"].map("{:,}".format)
    styled = df.style.format({"金額": "{:,.0f}"}, precision=1)
    plt.style.use("ggplot")
    fig, ax = plt.subplots()
    ax.bar(["a", "b"], [1, 2], **{"color": "tab:blue", "alpha": 0.8})
    offsets = pd.tseries.offsets.MonthEnd(1)
    arr = np.load("a.npy", allow_pickle=False)
    match df.shape:
        case (rows, cols) if rows > 0:
            print(rows, cols)
    class Row:
        def __init__(self, value):
            self._value = value

        def __repr__(self):
            return f"Row({self._value})"
    """,
]


def _rules(violations: list[PolicyViolation]) -> set[str]:
    return {v.rule for v in violations}


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(("code", "rule", "named"), REJECTED + BYPASSES)
def test_dangerous_code_is_refused_with_a_japanese_reason_naming_it(
    code: str, rule: str, named: str, profile: SandboxProfile
) -> None:
    violations = check_code(code, profile)
    matching = [v for v in violations if v.rule == rule]
    assert matching, f"{code!r} gave {violations}"
    assert any(named in v.message for v in matching), matching
    assert all(JAPANESE.search(v.message) for v in violations)
    assert all(1 <= v.line <= code.count("\n") + 1 and v.col >= 1 for v in violations)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("code", ALLOWED + ALLOWED_MORE)
def test_realistic_analysis_code_passes_untouched(code: str, profile: SandboxProfile) -> None:
    source = textwrap.dedent(code)
    assert check_code(source, profile) == []
    tree = enforce_policy(source, profile)
    assert isinstance(tree, ast.Module)
    compile(tree, "<action>", "exec")  # the returned tree is usable as is


def test_enforce_policy_lists_every_violation_with_its_line() -> None:
    code = (
        "import pandas as pd\nimport os\ndf = pd.read_pickle('x')\n\nx = ().__class__\neval('')\n"
    )
    with pytest.raises(PolicyError) as caught:
        enforce_policy(code, ANALYSIS)
    error = caught.value
    assert error.code == "POLICY_VIOLATION"
    assert error.recoverable is True
    assert isinstance(error, BlockError)
    found = [(v["line"], v["rule"]) for v in error.details["violations"]]
    assert found == [
        (2, "import-not-allowed"),
        (3, "pickle-loader"),
        (5, "dunder-attribute"),
        (6, "forbidden-builtin"),
    ]
    assert error.details["profile"] == "analysis"
    assert "4 件" in error.message
    assert "2 行目: モジュール 'os'" in error.message
    assert "（ほか 1 件）" in error.message  # the first three are quoted, the rest counted
    assert "許可されたモジュール（pandas, numpy, matplotlib, seaborn, sklearn," in error.hint
    assert error.to_dict()["details"]["violations"][0]["message"].startswith("モジュール 'os'")


def test_violations_are_sorted_deduplicated_and_located_in_characters() -> None:
    code = "import operator\n金額 = y.__class__\noperator.attrgetter('__class__.__class__')(1)\n"
    violations = check_code(code, CODEACT)
    assert [(v.line, v.col, v.rule) for v in violations] == [
        (2, 8, "dunder-attribute"),  # the attribute's own column, in characters (not bytes)
        (3, 21, "dunder-attribute"),  # the same name twice in one literal is reported once
    ]


def test_import_messages_list_allowed_packages_and_submodules() -> None:
    [top] = check_code("import requests", ANALYSIS)
    assert "'requests'" in top.message
    assert "（pandas, numpy, matplotlib" in top.message
    [sub] = check_code("import numpy.testing", ANALYSIS)
    assert "'numpy.testing'" in sub.message
    assert "numpy.linalg" in sub.message  # the submodules that are allowed


def test_the_profile_allowlist_decides_what_imports_pass() -> None:
    narrow = dataclasses.replace(ANALYSIS, name="narrow", allowed_imports=frozenset({"math"}))
    assert check_code("import math", narrow) == []
    [violation] = check_code("import pandas as pd", narrow)
    assert violation.rule == "import-not-allowed"
    assert "（math）" in violation.message
    with pytest.raises(PolicyError) as caught:
        enforce_policy("import pandas", narrow)
    assert caught.value.details["profile"] == "narrow"


@pytest.mark.parametrize("profile", PROFILES)
def test_syntax_errors_come_back_with_line_offset_and_text(profile: SandboxProfile) -> None:
    code = "import pandas as pd\ndf = pd.read_csv('a.csv'\nprint(df)\n"
    for call in (check_code, enforce_policy):
        with pytest.raises(BlockError) as caught:
            call(code, profile)
        error = caught.value
        assert not isinstance(error, PolicyError)
        assert error.code == "SYNTAX_ERROR"
        assert error.recoverable is True
        assert error.hint == "構文を修正してください。"
        assert error.details["line"] == 2
        assert error.details["offset"] >= 1
        assert "read_csv" in error.details["text"]
        assert "構文エラー" in error.message
        assert "2 行目" in error.message


def test_oversized_and_overly_nested_code_is_refused_not_crashed_on() -> None:
    [large] = check_code("x = 1\n" * (MAX_CODE_CHARS // 6 + 1), ANALYSIS)
    assert large.rule == "code-too-large"
    for code in ("x = " + "-" * 100_000 + "1", "x = " + " + ".join(["a"] * 20_000)):
        [nested] = check_code(code, ANALYSIS)
        assert nested.rule == "code-too-complex"
        with pytest.raises(PolicyError):
            enforce_policy(code, ANALYSIS)


def test_checking_the_whole_corpus_is_fast() -> None:
    started = time.perf_counter()
    for code, _rule, _named in REJECTED:
        check_code(code, ANALYSIS)
    for code in ALLOWED:
        check_code(textwrap.dedent(code), ANALYSIS)
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize("rules", ["NAME_RULES", "ATTRIBUTE_RULES"])
def test_a_refused_name_is_reported_under_one_rule_only(rules: str) -> None:
    """The rule tables are checked in order; no name in two sets, so the order cannot decide."""
    from keiri_agent.sandbox import policy_rules

    table = getattr(policy_rules, rules)
    seen: dict[str, str] = {}
    for names, rule in table:
        for name in names:
            assert seen.setdefault(name, rule) == rule, f"{name}: {seen[name]} and {rule}"
    assert check_code("x = object().read_array", CODEACT)[0].rule == "pickle-loader"
