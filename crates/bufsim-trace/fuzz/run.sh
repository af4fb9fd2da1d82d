#!/usr/bin/env bash
# Fuzzes every trace reader with cargo-fuzz (libFuzzer) for SECONDS each (default 60).
# Needs a nightly toolchain (`cargo +nightly`) and `cargo install cargo-fuzz`; crashes land in
# fuzz/artifacts/TARGET/. Usage: crates/bufsim-trace/fuzz/run.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo +nightly fuzz list)
fi
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t"
  echo "== $t ($secs s)"
  # -rss_limit_mb: a reader whose memory grew with the input would be reported as a crash;
  # -timeout: any single input taking over 10 s is reported as a hang.
  cargo +nightly fuzz run "$t" "corpus/$t" "seeds/$t" -- \
    -max_total_time="$secs" -rss_limit_mb=512 -timeout=10 -max_len=65536 -print_final_stats=1 2>&1 \
    | grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+==|SUMMARY|Done)" || true
  if ls "artifacts/$t"/crash-* "artifacts/$t"/timeout-* "artifacts/$t"/oom-* >/dev/null 2>&1; then
    echo "$t: FOUND A PROBLEM, see fuzz/artifacts/$t" >&2
    exit 1
  fi
done
