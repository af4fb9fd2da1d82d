"""Type stubs of the native module (private: use the functions of ``bufsim``)."""

from typing import Any

__version__: str
FORMATS: list[str]

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
    skip_bad: bool = False,
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
    ) -> list[dict[str, Any]]: ...

def policies() -> list[dict[str, Any]]: ...
def prefetchers() -> list[dict[str, Any]]: ...
def size_to_blocks(text: str, block_size: int = 4096) -> int: ...
def detect_format(path: str) -> str: ...
def convert(path: str, out: str, *, format: str = "auto", skip_bad: bool = False) -> dict[str, Any]: ...
