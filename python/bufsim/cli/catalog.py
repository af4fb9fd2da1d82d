"""`bufsim policies`, `bufsim prefetchers`, `bufsim devices` and `bufsim options`: what bufsim knows."""

from __future__ import annotations

import argparse
import json

from bufsim.api import devices, policies, prefetchers


def cmd_policies(args: argparse.Namespace) -> int:
    infos = policies()
    if args.json:
        for p in infos:
            print(json.dumps(p))
        return 0
    for p in infos:
        aliases = f" (also {', '.join(p['aliases'])})" if p["aliases"] else ""
        print(f"{p['name']}{aliases}: {p['summary']}")
        if p["preset_of"]:
            print(f"    preset of: {p['preset_of']}")
        print(f"    paper: {p['paper']}")
        print_params(p, "    ")
    return 0


def print_params(entry: dict, indent: str) -> None:
    """One line per parameter: name=default, doc, and the range a value must be in."""
    for (name, default, doc), allowed in zip(entry["params"], entry["ranges"]):
        print(f"{indent}{name}={default}  {doc} [{allowed}]")


def cmd_prefetchers(args: argparse.Namespace) -> int:
    for p in prefetchers():
        print(f"{p['name']}: {p['paper']}")
        print_params(p, "    ")
    return 0


def cmd_devices(args: argparse.Namespace) -> int:
    infos = devices()
    if args.json:
        for d in infos:
            print(json.dumps(d))
        return 0
    for title, kind in (
        ("Device models (--device)", "device"),
        ("Device presets (--device)", "preset"),
        ("I/O schedulers (--io-scheduler)", "scheduler"),
    ):
        print(f"{title}:")
        for d in (d for d in infos if d["kind"] == kind):
            aliases = f" (also {', '.join(d['aliases'])})" if d["aliases"] else ""
            print(f"  {d['name']}{aliases}: {d['summary']}")
            if d["preset_of"]:
                print(f"      preset of: {d['preset_of']}")
            print(f"      source: {d['paper']}")
            print_params(d, "      ")
        print()
    return 0


def cmd_options(args: argparse.Namespace) -> int:
    from bufsim.results import RESULT_FIELDS
    from bufsim.options import OPTION_FIELDS

    if args.results:
        rows = RESULT_FIELDS
        if args.json:
            for f in rows:
                print(json.dumps(f))
            return 0
        for f in rows:
            unit = f" [{f['unit']}]" if f["unit"] else ""
            timed = " (timed runs)" if f["timed"] else ""
            print(f"{f['name']}: {f['kind']}{unit}{timed}  {f['doc']}")
        return 0
    if args.json:
        for f in OPTION_FIELDS:
            print(json.dumps({name: getattr(f, name) for name in type(f).__slots__}))
        return 0
    for f in OPTION_FIELDS:
        flag = "--" + f.name.replace("_", "-")
        print(f"{f.name} ({flag}, section {f.section}, default {f.shown_default}): {f.doc}")
    return 0


def add_commands(sub) -> None:
    pol = sub.add_parser("policies", help="list replacement policies with parameters, defaults and papers")
    pol.add_argument("--json", action="store_true", help="one JSON object per policy")
    pol.set_defaults(func=cmd_policies)

    pre = sub.add_parser("prefetchers", help="list read-ahead algorithms with parameters and sources")
    pre.set_defaults(func=cmd_prefetchers)

    dev = sub.add_parser("devices", help="list device models, presets and I/O schedulers of timed mode")
    dev.add_argument("--json", action="store_true", help="one JSON object per entry")
    dev.set_defaults(func=cmd_devices)

    opt = sub.add_parser(
        "options",
        help="list run options (Python keywords and flags) or result fields",
        description="The core's option table: every run option with its flag, section, default "
        "and meaning, the same for bufsim.simulate/sweep/run keywords, sweep files and the "
        "columns of a results database. With --results: every field of a result, its kind and unit.",
    )
    opt.add_argument("--results", action="store_true", help="list the fields of a result instead")
    opt.add_argument("--json", action="store_true", help="one JSON object per entry")
    opt.set_defaults(func=cmd_options)
