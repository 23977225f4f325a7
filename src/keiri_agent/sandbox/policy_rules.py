"""The AST policy's rule tables: what is refused, and the Japanese words that say why.

Kept apart from the checker (``policy.py``) so the lists can be read and reviewed on their own.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator, Generator

__all__ = [
    "ATTRIBUTE_FUNCTIONS",
    "ATTRIBUTE_NAME_PARAMETERS",
    "ATTRIBUTE_RULES",
    "DEFINABLE_DUNDERS",
    "DYNAMIC_IMPORT_ATTRIBUTES",
    "EXTERNAL_PROCESS_ATTRIBUTES",
    "EXTERNAL_PROCESS_KEYWORDS",
    "EXTERNAL_PROCESS_RCPARAMS",
    "FORBIDDEN_BUILTINS",
    "FORMAT_MACHINERY",
    "GETTER_FACTORIES",
    "HOST_PATH_PREFIXES",
    "INTERNAL_ATTRIBUTES",
    "IO_FUNCTIONS",
    "MESSAGES",
    "NAME_RULES",
    "NETWORK_ATTRIBUTES",
    "PICKLE_ATTRIBUTES",
    "PICKLE_MODULES",
    "PICKLE_POSITIONAL",
    "PIVOT_ATTRIBUTES",
    "PIVOT_MODULE_NAMES",
    "PREFERRED_PACKAGES",
    "PUBLIC_SUBMODULES",
    "SAFE_DUNDERS",
    "SAFE_PRIVATE_ATTRIBUTES",
    "SHADOWABLE_BUILTINS",
    "STRING_EVALUATION_ATTRIBUTES",
    "TYPE_TESTS",
    "VARIANT_RULES",
]

_EXEC = "文字列をコードとして実行すると検査を迂回できるため"
_ENV = "実行環境の内部（組み込み関数など）に触れられるため"
FORBIDDEN_BUILTINS: dict[str, str] = {
    **dict.fromkeys(("exec", "eval", "compile"), _EXEC),
    **dict.fromkeys(("globals", "locals", "vars"), _ENV),
    **dict.fromkeys(("exit", "quit"), "実行を途中で終了させるため"),
    "__import__": "任意のモジュールを読み込めるため",
    "breakpoint": "デバッガーや外部フックを起動するため",
    "help": "ページャーなどの外部プログラムを起動することがあるため",
    "input": "標準入力を待って止まるため",
}
# Harmless enough that a name the code binds itself (``input = df``) is not refused.
SHADOWABLE_BUILTINS = frozenset({"input", "exit", "quit"})
ATTRIBUTE_FUNCTIONS = frozenset({"getattr", "setattr", "delattr", "hasattr"})
GETTER_FACTORIES = frozenset({"attrgetter", "methodcaller"})
SAFE_DUNDERS = frozenset(
    {"__init__", "__name__", "__qualname__", "__doc__", "__main__", "__version__", "__file__"}
)
# Where a parameter names attributes the function reads or writes: getattr(obj, NAME),
# attrgetter(*NAMES), update_wrapper(w, f, ASSIGNED, UPDATED)... -> (positions, keywords); None
# means every positional argument. Such names must be literals, judged like ``obj.NAME``.
ATTRIBUTE_NAME_PARAMETERS: dict[str, tuple[tuple[int, ...] | None, tuple[str, ...]]] = {
    **dict.fromkeys(("getattr", "setattr", "delattr", "hasattr"), ((1,), ())),
    "attrgetter": (None, ()),
    "methodcaller": ((0,), ()),
    "update_wrapper": ((2, 3), ("assigned", "updated")),
    "wraps": ((1, 2), ("assigned", "updated")),
}


def _interpreter_internals() -> frozenset[str]:
    """Every attribute of frames, tracebacks, generators, coroutines and code objects that
    carries its type's prefix (f_back, tb_frame, gi_frame, cr_frame, ag_frame, co_consts...),
    read from the types themselves so that a new one is refused without being listed."""

    def generator() -> Generator[int, None, None]:
        yield 1

    async def coroutine() -> None:
        return None

    async def agenerator() -> AsyncGenerator[int, None]:
        yield 1

    pending = coroutine()
    samples: list[object] = [
        sys._getframe(),
        generator(),
        pending,
        agenerator(),
        generator.__code__,
    ]
    try:
        raise ValueError
    except ValueError as exc:
        samples.append(exc.__traceback__)
    pending.close()
    prefixes = ("f_", "tb_", "gi_", "cr_", "ag_", "co_")
    return frozenset(n for o in samples for n in dir(o) if n.startswith(prefixes))


# Interpreter internals (frame walks into the worker's own locals) and the functions that
# hand out frames or hook every frame.
INTERNAL_ATTRIBUTES = _interpreter_internals() | frozenset(
    {"func_globals", "mro", "currentframe", "getouterframes", "getinnerframes", "walk_stack",
     "walk_tb", "settrace", "setprofile", "gettrace", "getprofile"}
)  # fmt: skip
# A deny-list of known pivots from allowed modules to the system (np.os, pd.io.common.os,
# np.ctypeslib, sys.modules), refused on any receiver. Not "spawn": numpy's Generator.spawn.
PIVOT_ATTRIBUTES = frozenset(
    {"os", "sys", "subprocess", "ctypes", "_ctypes", "ctypeslib", "builtins", "importlib",
     "system", "popen", "popen2", "_os", "_sys", "posix_spawn", "fork", "execv", "execve", "posix",
     "_posixsubprocess", "pty", "socket", "modules", "__loader__", "__spec__", "f2py",
     "distutils", "_distutils", "setuptools", "inspect", "traceback", "gc", "threading",
     "_thread", "multiprocessing", "signal", "resource", "shutil", "mmap"}
)  # fmt: skip
# Bare names: ``sys.modules`` with ``sys`` never imported (ambient or injected globals).
PIVOT_MODULE_NAMES = frozenset(
    {"os", "sys", "subprocess", "ctypes", "builtins", "importlib", "posix", "socket"}
)
PICKLE_MODULES = frozenset(
    {"pickle", "_pickle", "dill", "cloudpickle", "joblib", "shelve", "marshal"}
)
PICKLE_ATTRIBUTES = frozenset({"Unpickler", "read_array"}) | PICKLE_MODULES  # + any "*pickle*"
# Machinery that evaluates strings as code (typing's forward references, dataclasses' code
# generator, Jinja2 templates reached through pandas' Styler).
STRING_EVALUATION_ATTRIBUTES = frozenset(
    {"get_type_hints", "ForwardRef", "_evaluate", "_create_fn", "jinja2", "from_custom_template",
     "evaluate_forward_ref", "get_annotations"}
)  # fmt: skip
# string.Formatter's field resolution: returns the object a field name walks to.
FORMAT_MACHINERY = frozenset({"get_field", "vformat"})
# numpy.load(file, mmap_mode, allow_pickle): the positional index that can turn pickles on.
PICKLE_POSITIONAL: dict[str, int] = {"load": 2}
# Special methods and attributes a class may define: the plain protocols of data classes.
# Hooks into isinstance/match/attribute lookup/class creation (__instancecheck__,
# __match_args__, __getattribute__, __init_subclass__, __set_name__...) are refused.
DEFINABLE_DUNDERS = frozenset(
    {"__init__", "__post_init__", "__repr__", "__str__", "__format__", "__eq__", "__ne__",
     "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__", "__len__", "__iter__",
     "__next__", "__contains__", "__getitem__", "__setitem__", "__call__", "__enter__",
     "__exit__", "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
     "__truediv__", "__rtruediv__", "__floordiv__", "__mod__", "__neg__", "__abs__",
     "__round__", "__int__", "__float__", "__all__", "__slots__", "__doc__"}
)  # fmt: skip
# Public namespaces of allowed packages, reachable as attributes (pd.api.types) and importable,
# when their package is allowed. Every other submodule reached through attributes is judged
# like its import (pd.core.computation.scope, np.lib.format, pd.io.common).
PUBLIC_SUBMODULES = frozenset(
    {"pandas.api", "pandas.api.types", "pandas.api.extensions", "pandas.api.indexers",
     "pandas.errors", "pandas.tseries", "pandas.tseries.offsets", "pandas.tseries.frequencies",
     "pandas.plotting", "pandas.arrays", "numpy.ma", "numpy.polynomial",
     "numpy.polynomial.polynomial", "matplotlib.style", "matplotlib.lines", "matplotlib.markers",
     "matplotlib.figure", "matplotlib.axes", "matplotlib.text", "matplotlib.collections",
     "matplotlib.legend", "matplotlib.transforms", "matplotlib.scale", "matplotlib.container",
     "numpy.lib.stride_tricks"}
)  # fmt: skip
# Private attributes analysis code commonly uses (matplotlib's colour and patch cycles); they
# reach nothing the public API does not. Every other '_name' is refused.
SAFE_PRIVATE_ATTRIBUTES = frozenset({"_get_lines", "_get_patches_for_fill"})
# Functions whose second argument may be ``type`` itself (``isinstance(x, type)``).
TYPE_TESTS = frozenset({"isinstance", "issubclass"})
NETWORK_ATTRIBUTES = frozenset(
    {"load_dataset", "get_dataset_names", "DataSource", "urlopen", "urlretrieve"}
)
DYNAMIC_IMPORT_ATTRIBUTES = frozenset({"import_module", "load_module", "exec_module"})
EXTERNAL_PROCESS_ATTRIBUTES = frozenset(
    {"animation", "FFMpegWriter", "FFMpegFileWriter", "ImageMagickWriter", "ImageMagickFileWriter",
     "read_clipboard", "to_clipboard", "clipboard", "clipboards"}
)  # fmt: skip
EXTERNAL_PROCESS_KEYWORDS = frozenset({"usetex", "usedistiller", "texsystem"})
EXTERNAL_PROCESS_RCPARAMS = ("text.usetex", "ps.usedistiller", "pgf.texsystem", "animation.")
IO_FUNCTIONS = frozenset(
    {"open", "load", "loadtxt", "genfromtxt", "fromfile", "save", "savetxt", "savez", "savefig",
     "imread", "imsave"}
)  # fmt: skip
# The host's system areas; the OS layer hides them anyway, this only explains the refusal early.
HOST_PATH_PREFIXES = ("/proc/", "/etc/", "/sys/", "/dev/", "/root/", "/boot/", "/var/run/", "/run/")
PREFERRED_PACKAGES = ("pandas", "numpy", "matplotlib", "seaborn", "sklearn")

# Names refused wherever code reads them, and the rule each is reported under (the sets do not
# overlap, so their order does not matter).
NAME_RULES: tuple[tuple[frozenset[str], str], ...] = (
    (PIVOT_MODULE_NAMES, "module-pivot"),
    (PICKLE_MODULES, "pickle-loader"),
)
# Attribute names refused on any object (``x.attr``, getattr(x, "attr"), from-imports).
ATTRIBUTE_RULES: tuple[tuple[frozenset[str], str], ...] = (
    (INTERNAL_ATTRIBUTES, "internal-attribute"),
    (PIVOT_ATTRIBUTES, "module-pivot"),
    (PICKLE_ATTRIBUTES, "pickle-loader"),
    (STRING_EVALUATION_ATTRIBUTES, "string-evaluation"),
    (FORMAT_MACHINERY, "format-machinery"),
    (NETWORK_ATTRIBUTES, "network-function"),
    (DYNAMIC_IMPORT_ATTRIBUTES, "dynamic-import"),
    (EXTERNAL_PROCESS_ATTRIBUTES, "external-process"),
)

MESSAGES: dict[str, str] = {
    "import-not-allowed": "モジュール '{name}' の import は許可されていません。サンドボックスでは許可リストのモジュール（{allowed}）だけを import できます。",
    "import-submodule": "モジュール '{name}' の import は許可されていません。サブモジュールは個別に許可されたものだけ使えます（{allowed}）。",
    "import-relative": "相対 import（from . import ...）は許可されていません。コードは単独のスクリプトとして実行されます。",
    "import-star": "'from {name} import *' は許可されていません。使う名前を明示して import してください。",
    "forbidden-builtin": "組み込み関数 '{name}' は使えません（{why}）。",
    "dynamic-attribute": "'{name}' の属性名が文字列リテラルではありません（計算した名前で属性を扱うと検査を迂回できるため）。属性名はそのまま書いてください。",
    "type-creation": "type() に 3 つの引数を渡すクラスの動的生成は許可されていません。class 文で書いてください。",
    "dunder-name": "特殊な名前 '{name}' は使えません（実行環境の内部に触れられるため）。",
    "dunder-attribute": "特殊属性 '{name}' へのアクセスは許可されていません（__class__ や __subclasses__ などをたどるとサンドボックスの外の機能に届くため）。",
    "dunder-string": "文字列 '{text}' に特殊名 '{name}' が含まれています（属性名として使うと検査を迂回できるため）。",
    "internal-attribute": "属性 '{name}' は使えません（フレーム・トレースバック・ジェネレーターの内部をたどると実行環境の外側に届くため）。",
    "module-pivot": "'{name}' へのアクセスは許可されていません（os・sys・ctypes などのシステム機能に届く経路のため）。",
    "dynamic-import": "'{name}' は使えません（文字列で指定したモジュールを読み込めるため）。",
    "pickle-loader": "'{name}' は使えません（pickle 形式の読み込みは任意のコードを実行できるため）。CSV・Excel・Parquet を使ってください。",
    "allow-pickle": "'allow_pickle' は False 以外にできません（pickle を含むファイルの読み込みは任意のコードを実行できるため）。",
    "load-kwargs": "'{name}' の引数を ** で渡すことは許可されていません（allow_pickle を隠せるため）。",
    "pandas-eval": "'eval'（pd.eval / DataFrame.eval）による式の評価は許可されていません。列の計算は df['c'] = df['a'] + df['b'] のように直接書いてください。",
    "query-expression": "DataFrame.query の{why}。条件は '@' や '__' を含まない文字列リテラルで書くか、df[df['金額'] > x] のようなブールインデックスを使ってください。",
    "format-string": "書式文字列 '{text}' の置換フィールドで特殊属性や内部属性をたどることは許可されていません。",
    "format-map": "'format_map' は許可されていません（書式文字列から属性をたどれるため）。format や f 文字列を使ってください。",
    "string-evaluation": "'{name}' は使えません（文字列をコードとして評価する仕組みを通すと検査を迂回できるため）。",
    "external-process": "'{name}' は使えません（ライブラリが LaTeX・ghostscript・ffmpeg・xclip などの外部プログラムを起動するため）。",
    "pgf-backend": "pgf バックエンドは使えません（保存時に LaTeX を起動するため）。",
    "network-url": "URL '{text}' の読み書きは許可されていません（サンドボックスからはネットワークに接続できないため）。ファイルとして入力してください。",
    "network-function": "'{name}' は使えません（インターネットからデータを取得するため。サンドボックスからはネットワークに接続できません）。",
    "host-path": "パス '{text}' は使えません（サンドボックスの外のシステム領域のため）。作業フォルダー内の相対パスを使ってください。",
    "private-attribute": "非公開の属性 '{name}' へのアクセスは許可されていません（'_' で始まる名前はライブラリの内部で、文字列の評価やフレームの取得など検査を迂回する機能に届くため）。公開されている API を使ってください。",
    "attribute-submodule": "属性でたどった先のモジュール '{name}' は許可されていません（属性でたどるモジュールも import と同じく判断します。{allowed}）。",
    "annotation-string": "型注釈の文字列 '{text}' は式として読めません（typing や functools.singledispatch は文字列の注釈をコードとして評価するため、注釈の文字列も検査します）。",
    "format-template": "'format' の書式が文字列リテラルではありません（実行時に組み立てた書式は検査できず、置換フィールドから属性をたどれるため）。書式は文字列リテラルか f 文字列で書いてください。",
    "format-machinery": "'{name}' は使えません（書式のフィールド名から任意の属性をたどり、そのオブジェクトを取り出せるため）。",
    "dynamic-keyword": "'{name}' に '**' で渡す引数は、キーが文字列リテラルの辞書か、関数が受け取った **kwargs をそのまま渡す場合だけ許可されています（allow_pickle を名前を隠して渡せるため）。",
    "pickle-starred": "'{name}' に '*' で引数を渡すことは許可されていません（allow_pickle を隠せるため）。",
    "pickle-value": "'{name}' を呼び出し以外の形で使うことは許可されていません（別の関数を通すと allow_pickle の検査を迂回できるため）。",
    "metaclass": "メタクラス（metaclass=）は使えません（isinstance や match の判定に割り込み、ライブラリ内部のオブジェクトを受け取れるため）。",
    "dunder-definition": "特殊メソッド・特殊属性 '{name}' の定義は許可されていません（match 文・isinstance・属性の参照などの内部から呼ばれ、検査されない方法で属性をたどれるため）。定義できるのは __init__・__repr__・__eq__・__len__ などです。",
    "module-assignment": "モジュールの属性 '{name}' の書き換えは許可されていません（json.dumps などを差し替えるとライブラリやサンドボックスの動作を偽装できるため）。",
    "code-too-large": "コードが長すぎます（{size:,} 文字、上限 {limit:,} 文字）。",
    "code-too-complex": "コードの入れ子が深すぎて検査できません。式や制御構造を分割してください。",
}
# Message variants reported under another rule id.
VARIANT_RULES = {
    "import-submodule": "import-not-allowed",
    "allow-pickle": "pickle-loader",
    "load-kwargs": "pickle-loader",
    "format-map": "format-string",
    "pgf-backend": "external-process",
    "network-function": "network-url",
    "attribute-submodule": "import-not-allowed",
    "format-template": "format-string",
    "format-machinery": "format-string",
    "pickle-starred": "pickle-loader",
    "pickle-value": "pickle-loader",
    "dunder-definition": "dunder-name",
}
