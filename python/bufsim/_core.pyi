"""Type stubs of the native module (private: use the functions of ``bufsim``)."""

from typing import Any

__version__: str
FORMATS: list[str]
MAX_CLOSED: int

class BufsimError(ValueError): ...
class TraceFormatError(BufsimError): ...
class SpecError(BufsimError): ...

def run(
    path: str,
    policies: list[str],
    caches: list[str],
    *,
    prefetches: list[str] = ...,
    format: str = "auto",
    block_size: int = 4096,
    reads_only: bool = False,
    cluster: str = "64KiB",
    seed: int = 42,
    jobs: int = 0,
    check: bool = False,
    timing: bool = False,
    device: str = "st39102lw",
    scheduler: str = "noop",
    think: str = "trace",
    single_stream: bool = False,
    file_gap: str = "0blocks",
    first_level: tuple | None = None,
    skip_bad: bool = False,
    storage: tuple | None = None,
) -> list[dict[str, Any]]: ...
class Trace:
    path: str
    format: str
    def __init__(self, path: str, *, format: str = "auto", skip_bad: bool = False) -> None: ...
    def __len__(self) -> int: ...
    def run(
        self,
        policies: list[str],
        caches: list[str],
        *,
        prefetches: list[str] = ...,
        block_size: int = 4096,
        reads_only: bool = False,
        cluster: str = "64KiB",
        seed: int = 42,
        jobs: int = 0,
        check: bool = False,
        timing: bool = False,
        device: str = "st39102lw",
        scheduler: str = "noop",
        think: str = "trace",
        single_stream: bool = False,
        file_gap: str = "0blocks",
        first_level: tuple | None = None,
        storage: tuple | None = None,
    ) -> list[dict[str, Any]]: ...

def policies() -> list[dict[str, Any]]: ...
def prefetchers() -> list[dict[str, Any]]: ...
def devices() -> list[dict[str, Any]]: ...
def size_to_blocks(text: str, block_size: int = 4096) -> int: ...
def canonical_policy(spec: str) -> str: ...
def detect_format(path: str) -> str: ...
def filter_trace(
    path: str, out: str, first_level: tuple, *, format: str = "auto", block_size: int = 4096,
    reads_only: bool = False, seed: int = 42,
) -> tuple[int, list[dict[str, Any]]]: ...
def breakdown(
    path: str, policies: list[str], caches: list[str], *, format: str = "auto", block_size: int = 4096,
    reads_only: bool = False, seed: int = 42, first_level: tuple | None = None,
) -> list[dict[str, Any]]: ...

# AMP (issue 7)
def run_timeline(
    path: str, policy: str, cache: str, *, prefetch: str = "none", format: str = "auto", block_size: int = 4096,
    reads_only: bool = False, cluster: str = "64KiB", seed: int = 42, timing: bool = False,
    device: str = "st39102lw", scheduler: str = "noop", think: str = "trace", single_stream: bool = False,
    file_gap: str = "0blocks", storage: tuple | None = None,
) -> tuple[str, list[tuple[int, str, int, int, float]]]: ...
def generators() -> list[dict[str, Any]]: ...
def amp_table1(*, seed: int = 1, length: int = 2000, sampling: float = 1.0) -> list[dict[str, Any]]: ...
def detect(
    path: str, detector: str = "amp", *, format: str = "auto", block_size: int = 4096, reads_only: bool = False,
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
    seed: int = 42,
) -> str: ...
def mrc(
    path: str,
    *,
    sizes: list[str] | None = None,
    all_sizes: bool = False,
    exact: bool = True,
    shards_rate: float | None = None,
    shards_size: int | None = None,
    seed: int = 42,
    format: str = "auto",
    block_size: int = 4096,
    reads_only: bool = False,
) -> str: ...
def convert(path: str, out: str, *, format: str = "auto", skip_bad: bool = False) -> dict[str, Any]: ...
