"""The AST policy's rule tables: what is refused, and the Japanese words that say why.

Kept apart from the checker (``policy.py``) so the lists can be read and reviewed on their own.
"""

from __future__ import annotations

__all__ = [
    "ATTRIBUTE_FUNCTIONS",
    "DYNAMIC_IMPORT_ATTRIBUTES",
    "EXTERNAL_PROCESS_ATTRIBUTES",
    "EXTERNAL_PROCESS_KEYWORDS",
    "EXTERNAL_PROCESS_RCPARAMS",
    "FORBIDDEN_BUILTINS",
    "GETTER_FACTORIES",
    "HOST_PATH_PREFIXES",
    "INTERNAL_ATTRIBUTES",
    "IO_FUNCTIONS",
    "MESSAGES",
    "NETWORK_ATTRIBUTES",
    "PICKLE_ATTRIBUTES",
    "PICKLE_MODULES",
    "PIVOT_ATTRIBUTES",
    "PIVOT_MODULE_NAMES",
    "PREFERRED_PACKAGES",
    "SAFE_DUNDERS",
    "SHADOWABLE_BUILTINS",
    "STRING_EVALUATION_ATTRIBUTES",
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
INTERNAL_ATTRIBUTES = frozenset(
    {"gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "cr_await", "ag_frame",
     "ag_code", "tb_frame", "tb_next", "f_back", "f_globals", "f_locals", "f_builtins", "f_code",
     "co_code", "func_globals", "mro"}
)  # fmt: skip
# A deny-list of known pivots from allowed modules to the system (np.os, pd.io.common.os,
# np.ctypeslib, sys.modules), refused on any receiver. Not "spawn": numpy's Generator.spawn.
PIVOT_ATTRIBUTES = frozenset(
    {"os", "sys", "subprocess", "ctypes", "_ctypes", "ctypeslib", "builtins", "importlib",
     "system", "popen", "popen2", "_os", "_sys", "posix_spawn", "fork", "execv", "execve", "posix",
     "_posixsubprocess", "pty", "socket", "modules", "__loader__", "__spec__", "f2py",
     "distutils", "_distutils", "setuptools"}
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
    {"get_type_hints", "ForwardRef", "_evaluate", "_create_fn", "jinja2", "from_custom_template"}
)
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
}
