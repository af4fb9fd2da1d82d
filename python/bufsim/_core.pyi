"""Type stubs of the native module (private: use the functions of ``bufsim``)."""

from typing import Any

__version__: str
FORMATS: list[str]
GRID_OPTIONS: list[str]
RUN_SECTIONS: list[str]
MAX_CLOSED: int

class BufsimError(ValueError): ...
class TraceFormatError(BufsimError): ...
class SpecError(BufsimError): ...

#: Bits of a page log's page key below its file: ``(file << PAGE_KEY_SHIFT) | block``.
PAGE_KEY_SHIFT: int

# Options cross as one JSON object of the options set (bufsim.Options.to_json()); results come
# back as one dict per run with the fields of result_fields().
class Progress:
    """Counters a long call updates (bufsim.progress.track polls them to draw a bar)."""
    def __init__(self) -> None: ...
    def snapshot(self) -> tuple[int, str, str, int, int]: ...

def run(
    path: str,
    policies: list[str],
    caches: list[str],
    prefetches: list[str],
    options: str,
    progress: Progress | None = None,
) -> list[dict[str, Any]]: ...
def resolve_options(
    options: str, policies: list[str] = ..., caches: list[str] = ..., prefetches: list[str] = ...
) -> str: ...
def option_fields() -> list[dict[str, Any]]: ...
def results_text(rows: str, as_json: bool) -> str: ...
def format_table(headers: list[str], rows: list[list[str]], right: list[bool]) -> str: ...
def human_bytes(n: int) -> str: ...
def result_fields() -> list[dict[str, Any]]: ...

class Trace:
    path: str
    format: str
    def __init__(
        self, path: str, *, format: str = "auto", skip_bad: bool = False, progress: Progress | None = None
    ) -> None: ...
    def __len__(self) -> int: ...
    def run(
        self, policies: list[str], caches: list[str], prefetches: list[str] = ..., options: str = "{}", **keywords: Any
    ) -> list[dict[str, Any]]: ...

def registry(kind: str) -> list[dict[str, Any]]: ...
def size_to_blocks(text: str, block_size: int = 4096) -> int: ...
def canonical_policy(spec: str) -> str: ...
def canonical_prefetch(spec: str) -> str: ...
def detect_format(path: str) -> str: ...
def filter_trace(path: str, out: str, options: str) -> tuple[int, list[dict[str, Any]]]: ...
def breakdown(path: str, policies: list[str], caches: list[str], options: str) -> list[dict[str, Any]]: ...
def trace_file_names(path: str) -> list[str]: ...
def page_log(
    path: str,
    policy: str,
    cache_blocks: int,
    prefetch: str,
    sizes: list[tuple[str, int]],
    file_max: list[tuple[str, int]],
    reads_only: bool = False,
    steps: list[tuple[int, int]] = ...,
) -> dict[str, Any]: ...
def run_timeline(
    path: str,
    policy: str,
    cache: str,
    prefetch: str,
    options: str,
) -> tuple[str, list[tuple[int, str, int, int, float]]]: ...
def amp_table1(*, seed: int = 1, length: int = 2000, sampling: float = 1.0) -> list[dict[str, Any]]: ...
def detect(
    path: str,
    detector: str = "amp",
    *,
    format: str = "auto",
    block_size: int = 4096,
    reads_only: bool = False,
) -> list[dict[str, Any]]: ...
def analyze(
    path: str,
    *,
    format: str = "auto",
    block_size: int = 4096,
    reads_only: bool = False,
    working_set: bool = True,
    contexts: int = 8,
    hill_fraction: float = 0.1,
    jobs: int = 0,
    breakdown_policies: list[str] | None = None,
    breakdown_cache: str | None = None,
    seed: int,
    progress: Progress | None = None,
) -> str: ...
def mrc(
    path: str,
    *,
    sizes: list[str] | None = None,
    all_sizes: bool = False,
    exact: bool = True,
    shards_rate: float | None = None,
    shards_size: int | None = None,
    seed: int,
    format: str = "auto",
    block_size: int = 4096,
    reads_only: bool = False,
    progress: Progress | None = None,
) -> str: ...
def mrc_miniature(
    path: str,
    policy: str,
    *,
    rate: float,
    sizes: list[str] | None = None,
    scale: str | None = None,
    seed: int,
    format: str = "auto",
    block_size: int = 4096,
    reads_only: bool = False,
    jobs: int = 0,
) -> str: ...
def convert(
    path: str,
    out: str,
    *,
    format: str = "auto",
    skip_bad: bool = False,
    progress: Progress | None = None,
    to: str = "bst",
    block_size: int = 4096,
    reads_only: bool = False,
) -> dict[str, Any]: ...
