"""Command line for check_function, for the CI of libraries that ship custom Functions.

    python -m arraygrad.check mypkg.ops:MyCube --inputs "randn(3, 4)"
    python -m arraygrad.check mypkg.ops:Scale --inputs "randn(5)" 2.5 --modes backward vmap

Each `--inputs` entry is a Python expression evaluated with arraygrad's names
(`randn`, `tensor`, `float64`, ... and `torch` for the package itself). Prints the
report; exit status 0 when every mode passed or is not supported, 1 when one
failed, 2 for a usage error. `--plot FILE` saves the picture of the failures.
"""
import argparse
import importlib
import os
import runpy
import sys

import arraygrad
from arraygrad.autograd import Function
from arraygrad.autograd.check import MODES, check_function


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m arraygrad.check",
        description="Check a custom autograd.Function under every autograd mode and transform.")
    p.add_argument("function", help="module:FunctionName (or path/to/file.py:FunctionName)")
    p.add_argument("--inputs", nargs="+", required=True, metavar="EXPR",
                   help='example inputs, e.g. "randn(3, 4)" 2.5 True')
    p.add_argument("--modes", nargs="+", choices=MODES, metavar="MODE",
                   help=f"a subset of the modes: {' '.join(MODES)}")
    p.add_argument("--reference", metavar="module:function",
                   help="a function of the same inputs made of arraygrad ops, used instead of "
                        "finite differences and compared in values")
    p.add_argument("--atol", type=float, default=1e-5)
    p.add_argument("--rtol", type=float, default=1e-3)
    p.add_argument("--eps", type=float, default=1e-6)
    p.add_argument("--batch-size", type=int, default=3)
    p.add_argument("--seed", type=int, default=0, help="seed for randn(...) in --inputs")
    p.add_argument("--plot", metavar="FILE", help="save heatmaps of the failing modes to FILE")
    return p


def _load(spec, parser, what):
    module, sep, name = spec.rpartition(":")
    if not sep or not module or not name:
        parser.error(f"{what} must be module:Name, got {spec!r}")
    sys.path.insert(0, os.getcwd())
    try:
        if module.endswith(".py"):
            namespace = runpy.run_path(module)
            obj = namespace.get(name.split(".")[0])
            rest = name.split(".")[1:]
        else:
            obj, rest = importlib.import_module(module), name.split(".")
        for part in rest:
            obj = getattr(obj, part, None)
    except (ImportError, OSError) as e:
        parser.error(f"cannot load {what} {spec!r}: {type(e).__name__}: {e}")
    if obj is None:
        parser.error(f"module {module!r} has no {what} {name!r}")
    return obj


def _inputs(exprs, parser):
    names = {k: getattr(arraygrad, k) for k in dir(arraygrad) if not k.startswith("_")}
    names.update(torch=arraygrad, arraygrad=arraygrad)
    out = []
    for e in exprs:
        try:
            out.append(eval(e, dict(names)))  # noqa: S307 - the user's own command line
        except Exception as err:
            parser.error(f"--inputs {e!r}: {type(err).__name__}: {err}")
    return out


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    fn = _load(args.function, parser, "Function")
    if not (isinstance(fn, type) and issubclass(fn, Function)):
        parser.error(f"{args.function!r} is not an autograd.Function subclass")
    reference = _load(args.reference, parser, "reference") if args.reference else None
    arraygrad.manual_seed(args.seed)
    inputs = _inputs(args.inputs, parser)
    try:
        report = check_function(fn, *inputs, modes=args.modes, reference=reference,
                                atol=args.atol, rtol=args.rtol, eps=args.eps,
                                batch_size=args.batch_size, raise_on_failure=False)
    except (TypeError, ValueError) as e:
        parser.error(str(e))
    print(report)
    if args.plot and not report.passed:
        try:
            report.plot(args.plot)
            print(f"picture of the failures: {args.plot}")
        except (ImportError, ValueError) as e:
            print(f"--plot: {e}", file=sys.stderr)
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
